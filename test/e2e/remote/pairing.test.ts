/**
 * Pairing between two svc homes with real daemons through a real relay on loopback: offer,
 * accept, verbs through the link, autoconnect after daemon and relay restarts, and removal.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRelay } from "../../../core/remote/relay/relay-server.js";
import {
  accept,
  offer,
  pairings,
  relayWithTap,
  startNode,
  waitConnected,
  waitFor,
  type Captured,
  type Node,
} from "./helpers.js";

describe("pairing through the relay", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let a: Node;
  let b: Node;
  let id: string;

  beforeAll(async () => {
    relay = await relayWithTap();
    a = await startNode({ pairing: { rendezvous: relay.url } });
    b = await startNode({ pairing: { rendezvous: relay.url } });
  });
  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    await relay?.close();
  });

  it("an offer accepted by a second home pairs both ends, and both links connect", async () => {
    const text = await offer(a);
    expect(text).toMatch(/^svc:\/\/pair\?v=1&fp=[0-9a-f]{20}&k=/);
    const r = await accept(b, text);
    expect(r.stderr).toBe("");
    id = r.id!;
    await waitConnected(a, id);
    await waitConnected(b, id);
    expect((await pairings(a)).map((p) => p.role)).toEqual(["host"]);
    expect((await pairings(b)).map((p) => p.role)).toEqual(["peer"]);
    const ls = await b.cli(["pair", "ls"]);
    expect(ls.stdout).toContain(id);
    expect(ls.stdout).toContain("connected");
  });

  it("runs a verb on the paired daemon through the link, under its normal authorization", async () => {
    const made = await a.cli([
      "sentinel",
      "watch",
      "job:remote",
      "--session",
      "ses_remote1",
      "--label",
      "paired label 7731",
      "--json",
    ]);
    expect(made.code).toBe(0);
    const listed = await b.cli(["--remote", id, "sentinel", "list", "--json"]);
    expect(listed.stderr).toBe("");
    expect(listed.stdout).toContain("paired label 7731");
    // The paired end is not loopback, and its pairing has the default scope (read): creating a
    // sentinel is refused there, an outbound one all the more.
    const outbound = await b.cli([
      "--remote",
      id,
      "webhooks",
      "add",
      "https://example.invalid/hook",
      "--subject",
      "ci:x",
      "--json",
    ]);
    expect(outbound.code).toBe(1);
    expect(outbound.stdout).toMatch(/forbidden.*needs the operate scope/s);
    // The label crossed the relay only as ciphertext.
    expect(relay.frames.length).toBeGreaterThan(0);
    expect(relay.frames.some((f) => f.data.includes("paired label 7731"))).toBe(false);
  });

  it("reports each pairing's state on the status route", async () => {
    const status = (await (await a.daemon.fetch("/remote/status")).json()) as {
      fingerprint: string;
      publicKey: string;
      pairings: Array<{ id: string; link: { state: string } }>;
      tunnel: { state: string };
    };
    expect(status.fingerprint).toMatch(/^[0-9a-f]{20}$/);
    expect(status.pairings).toEqual([
      expect.objectContaining({ id, link: expect.objectContaining({ state: "connected" }) }),
    ]);
    expect(status.tunnel.state).toBe("off");
  });

  it("both ends connect again after a daemon restart, on either side", async () => {
    await b.restart();
    await waitConnected(b, id);
    await waitConnected(a, id);
    await a.restart();
    await waitConnected(a, id);
    await waitConnected(b, id);
    const listed = await b.cli(["--remote", id, "sentinel", "list", "--json"]);
    expect(listed.stdout).toContain("paired label 7731");
  });

  it("both ends connect again after a relay restart on the same port", async () => {
    const port = relay.port;
    await relay.close();
    await waitFor("links to notice", async () => (await pairings(b)).find((p) => p.link.state !== "connected"));
    const again = await startRelay({ port, bind: "127.0.0.1" });
    try {
      await waitConnected(a, id);
      await waitConnected(b, id);
      const listed = await b.cli(["--remote", id, "sentinel", "list", "--json"]);
      expect(listed.stdout).toContain("paired label 7731");
    } finally {
      relay = Object.assign(again, { frames: [] as Captured["frames"] });
    }
  });

  it("rm removes the pairing on each end", async () => {
    expect((await b.cli(["pair", "rm", id])).code).toBe(0);
    expect((await a.cli(["pair", "rm", id])).code).toBe(0);
    expect(await pairings(a)).toEqual([]);
    expect(await pairings(b)).toEqual([]);
    const gone = await b.cli(["--remote", id, "sentinel", "list"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`no pairing ${id}`);
  });
});
