/**
 * Every way a pairing can go wrong fails closed, with real daemons and a real relay: expired,
 * reused and altered offers, a replayed handshake, a wrong peer key; and the three states of
 * `pairing.rendezvous`, and `pair offer`'s usage errors.
 */
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import WebSocket from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_RENDEZVOUS_URL } from "../../../core/config/constants.js";
import { accept, offer, pairings, relayWithTap, startNode, waitConnected, waitFor, type Node } from "./helpers.js";

describe("pairing fails closed", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let a: Node;
  let b: Node;
  let c: Node;

  beforeAll(async () => {
    relay = await relayWithTap();
    [a, b, c] = await Promise.all([0, 1, 2].map(() => startNode({ pairing: { rendezvous: relay.url } })));
  });
  afterAll(async () => {
    await Promise.all([a, b, c].map((n) => n?.cleanup()));
    await relay?.close();
  });

  it("an expired offer is refused before anything is sent", async () => {
    const text = await offer(a, ["--ttl", "1s"]);
    const expiresAt = Number(new URL(text.replace("svc://", "http://")).searchParams.get("e"));
    await waitFor("the offer to expire", async () => Date.now() > expiresAt + 50);
    const r = await accept(b, text);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pairing offer expired at/);
  });

  it("--ttl reads the one duration grammar: 1d, 30s, 1.5h and 2 hours (refused before); over 24h is not", async () => {
    for (const [ttl, ms] of [
      ["1d", 86_400_000],
      ["30s", 30_000],
      ["1.5h", 5_400_000],
      ["2 hours", 7_200_000],
    ] as const) {
      const before = Date.now();
      const text = await offer(a, ["--ttl", ttl]);
      const after = Date.now();
      const expiresAt = Number(new URL(text.replace("svc://", "http://")).searchParams.get("e"));
      expect(expiresAt, ttl).toBeGreaterThanOrEqual(before + ms);
      expect(expiresAt, ttl).toBeLessThanOrEqual(after + ms);
    }
    const r = await a.cli(["pair", "offer", "--ttl", "2d"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--ttl "2d" is invalid: longer than 24h; allowed: a duration from 1s to 24h, e.g. ');
  });

  it("an altered offer fails: a key that does not match its fingerprint, or a changed field the handshake binds", async () => {
    const text = await offer(a);
    const q = new URLSearchParams(text.slice("svc://pair?".length));
    const otherKey = new URLSearchParams((await offer(c)).slice("svc://pair?".length)).get("k")!;
    const swapped = new URLSearchParams(q);
    swapped.set("k", otherKey);
    const r1 = await accept(b, `svc://pair?${swapped}`);
    expect(r1.code).toBe(1);
    expect(r1.stderr).toMatch(/altered: its fingerprint/);
    // A later expiry: the daemon's offer says otherwise, so the handshake does not authenticate.
    const later = new URLSearchParams(q);
    later.set("e", String(Number(q.get("e")) + 3_600_000));
    const r2 = await accept(b, `svc://pair?${later}`);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/dropped the handshake|did not prove/);
    expect(await pairings(b)).toEqual([]);
    expect(await pairings(a)).toEqual([]);
  });

  it("an offer is used once: a second accept is refused", async () => {
    const text = await offer(a);
    const first = await accept(b, text);
    expect(first.stderr).toBe("");
    const second = await accept(c, text);
    expect(second.code).toBe(1);
    // Which part refuses first races (the relay once the daemon has left the offer's channel, else
    // the daemon's handshake, or the connection it closes); every one of them fails closed.
    expect(second.stderr).toMatch(/used, expired or withdrawn|dropped the handshake|connect/);
    expect(await pairings(c)).toEqual([]);
    await waitConnected(a, first.id!);
  });

  it("a replayed handshake and a wrong peer key are refused by the daemon", async () => {
    const [p] = await pairings(b);
    const record = JSON.parse(await readFile(join(b.home, "pairings.json"), "utf8")).pairings[0];
    await waitConnected(b, p!.id);
    // The opening of B's standing link, as the relay forwarded it on that link's channel (the last
    // opening on any channel may be another test's accept, which no standing link would authenticate).
    const opening = relay.frames
      .filter((f) => f.kind === "channel" && f.channel === record.channel && f.data[0] === 1 && f.data.length > 80)
      .at(-1)!.data;
    await b.daemon.stop();
    await waitFor("A to see B leave", async () => (await pairings(a))[0]!.link.state === "waiting");
    const ws = new WebSocket(`${relay.url}/channel/${record.channel}?role=peer`);
    const seen: string[] = [];
    let binary = 0;
    ws.on("message", (d, isBinary) => (isBinary ? binary++ : seen.push(String(d))));
    await new Promise((r) => ws.once("open", r));
    await waitFor("paired", async () => seen.some((s) => s.includes("paired")));
    ws.send(opening);
    await waitFor("A to drop the replay", async () => seen.some((s) => s.includes("peer-left")));
    ws.close();
    expect(binary).toBe(0);
    expect(a.daemon.logs()).toContain("replayed handshake refused");

    // C holds B's pairing record (psk and channel) but its own key: A refuses it.
    await copyFile(join(b.home, "pairings.json"), join(c.home, "pairings.json"));
    await c.restart();
    const failed = await waitFor("C to be refused", async () =>
      (await pairings(c)).find((x) => /dropped the handshake/.test(x.link.lastError ?? "")),
    );
    expect(failed.link.state).not.toBe("connected");
    expect(a.daemon.logs()).toContain("wrong peer key");
  });
});

describe("the three states of pairing.rendezvous", { timeout: 90_000 }, () => {
  it("absent: the hosted default, a placeholder in this build, is refused at once, saying how to get a relay", async () => {
    const n = await startNode({});
    try {
      const r = await n.cli(["pair", "offer"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`this build's hosted default (${DEFAULT_RENDEZVOUS_URL}) is a placeholder`);
      expect(r.stderr).toContain("svc relay serve");
    } finally {
      await n.cleanup();
    }
  });

  it('"": pair offer requires --rendezvous, and links do not autoconnect at boot', async () => {
    const relay = await relayWithTap();
    const n = await startNode({ pairing: { rendezvous: "" } });
    const m = await startNode({ pairing: { rendezvous: relay.url } });
    try {
      const r = await n.cli(["pair", "offer"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("explicit opt-out");
      expect(r.stderr).toContain("--rendezvous");
      const text = await offer(n, ["--rendezvous", relay.url]);
      const got = await accept(m, text);
      expect(got.stderr).toBe("");
      await waitConnected(n, got.id!);
      await n.restart();
      expect((await pairings(n))[0]!.link.state).toBe("off");
    } finally {
      await n.cleanup();
      await m.cleanup();
      await relay.close();
    }
  });

  it("a URL: offers name that broker; --qr prints the pair page with {fp} filled and the offer in the fragment", async () => {
    const relay = await relayWithTap();
    const n = await startNode({ pairing: { rendezvous: relay.url, pairPage: "https://{fp}.pair.example.test/" } });
    try {
      const r = await n.cli(["pair", "offer", "--qr", "--json"]);
      const out = JSON.parse(r.stdout) as { offer: string; fingerprint: string; pairPage: string; rendezvous: string };
      expect(out.rendezvous).toBe(relay.url);
      expect(new URLSearchParams(out.offer.slice("svc://pair?".length)).get("r")).toBe(relay.url);
      expect(out.pairPage).toBe(`https://${out.fingerprint}.pair.example.test/#offer=${encodeURIComponent(out.offer)}`);
      const plain = await n.cli(["pair", "offer", "--qr", "--pair-page", "http://127.0.0.1:9/pair"]);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toContain("Pair page: http://127.0.0.1:9/pair#offer=svc%3A%2F%2Fpair");
      expect(plain.stdout).toMatch(/[▀▄█]/);
      const conflict = await n.cli(["pair", "offer", "--pair-page", "http://127.0.0.1:9/pair"]);
      expect(conflict.code).toBe(2);
      expect(conflict.stderr).toContain("--pair-page");
      // The flag follows pairing.pairPage's rule: {fp} only in the hostname (one origin per daemon).
      const inPath = await n.cli(["pair", "offer", "--qr", "--pair-page", "https://pair.example.test/{fp}/"]);
      expect(inPath.code).toBe(2);
      expect(inPath.stderr).toContain("{fp} in the hostname");
      const templated = await n.cli([
        "pair",
        "offer",
        "--qr",
        "--pair-page",
        "https://{fp}.flag.example.test/",
        "--json",
      ]);
      const t = JSON.parse(templated.stdout) as { fingerprint: string; pairPage: string };
      expect(t.pairPage.startsWith(`https://${t.fingerprint}.flag.example.test/#offer=`)).toBe(true);
      expect((await n.cli(["pair", "offer", "--ttl", "soon"])).code).toBe(2);
      expect((await n.cli(["pair", "offer", "--rendezvous", "http://x"])).code).toBe(2);
    } finally {
      await n.cleanup();
      await relay.close();
    }
  });
});
