/**
 * `POST /pairing/offers` with a real daemon and a real relay: a bad `ttlMs` is refused (400),
 * never replaced by the default; and only offers still waiting count toward the cap of pending
 * offers: one whose channel closed (withdrawn after too many refused handshakes) frees its place at once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_REFUSED_HANDSHAKES } from "../../../core/remote/pairing/offers.js";
import { garbagePeer, relayWithTap, startNode, waitFor, type Node } from "./helpers.js";

const post = (node: Node, body: unknown) =>
  node.daemon.fetch("/pairing/offers", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

describe("POST /pairing/offers", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let node: Node;

  beforeAll(async () => {
    relay = await relayWithTap({ limits: { offersPerMinute: 1000 } });
    node = await startNode({ pairing: { rendezvous: relay.url } });
  });
  afterAll(async () => {
    await node?.cleanup();
    await relay?.close();
  });

  it("refuses a ttlMs that is not a whole number of ms from 1 s to 24 h, instead of using the default", async () => {
    for (const ttlMs of [0, 999, 24 * 3_600_000 + 1, -5, 1.5, "600000", null, true]) {
      const r = await post(node, { ttlMs });
      expect(r.status, `ttlMs ${JSON.stringify(ttlMs)}`).toBe(400);
      expect(await r.text()).toContain("ttlMs");
    }
    const ok = await post(node, { ttlMs: 90_000 });
    expect(ok.status).toBe(201);
    const made = (await ok.json()) as { expiresAt: number };
    expect(made.expiresAt - Date.now()).toBeLessThanOrEqual(90_000);
    expect((await post(node, {})).status).toBe(201);
  });

  it("counts only offers still waiting toward the cap: a closed offer frees its place", async () => {
    // Fill the cap with offers.
    const urls: string[] = [];
    for (;;) {
      const r = await post(node, { ttlMs: 600_000 });
      if (r.status === 409) break;
      expect(r.status).toBe(201);
      urls.push(((await r.json()) as { url: string }).url);
      expect(urls.length).toBeLessThan(64);
    }
    expect(urls.length).toBeGreaterThan(0);
    // A refused handshake leaves an offer waiting; too many of them close it.
    const channel = new URLSearchParams(urls[0]!.slice("svc://pair?".length)).get("c")!;
    for (let i = 0; i < MAX_REFUSED_HANDSHAKES; i++) {
      const peer = await garbagePeer(relay.url, channel);
      await waitFor("the daemon to refuse the handshake", async () =>
        peer.texts.some((t) => t.includes("refused") || t.includes("peer-left")),
      );
    }
    // That offer is closed now: the daemon takes one more, and only one.
    const again = await post(node, { ttlMs: 600_000 });
    expect(again.status).toBe(201);
    expect((await post(node, { ttlMs: 600_000 })).status).toBe(409);
  });
});
