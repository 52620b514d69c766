/**
 * A broker that tampers: a WebSocket proxy in front of the real relay that injects a frame or
 * swaps two frames between real paired daemons. The channel fails closed with a clear error,
 * serves nothing it should not, and the link recovers with a fresh handshake.
 */
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer, type RawData } from "ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accept, offer, relayWithTap, startNode, waitConnected, waitFor, type Node } from "./helpers.js";

interface EvilBroker {
  url: string;
  mode: "pass" | "inject" | "reorder";
  close(): Promise<void>;
}

/** Forwards everything between clients and `upstream`; in a tampering mode, changes peer → daemon binary frames. */
async function evilBroker(upstream: string): Promise<EvilBroker> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  await new Promise((r) => wss.once("listening", r));
  const broker: EvilBroker = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1`,
    mode: "pass",
    close: () => new Promise((r) => (wss.clients.forEach((c) => c.terminate()), wss.close(() => r(undefined)))),
  };
  wss.on("connection", (client, req) => {
    const up = new WebSocket(upstream.replace(/\/v1$/, "") + req.url);
    const fromPeer = /role=peer/.test(req.url ?? "");
    const pending: Array<[RawData, boolean]> = [];
    let held: RawData | undefined;
    up.on("open", () => pending.splice(0).forEach(([d, b]) => up.send(d, { binary: b })));
    const toUp = (d: RawData, bin: boolean) =>
      up.readyState === WebSocket.OPEN ? up.send(d, { binary: bin }) : pending.push([d, bin]);
    client.on("message", (d, bin) => {
      const frame = d as Buffer;
      if (fromPeer && bin && frame[0] === 3 && broker.mode === "inject") {
        broker.mode = "pass";
        toUp(Buffer.concat([Buffer.of(3), randomBytes(60)]), true);
      } else if (fromPeer && bin && frame[0] === 3 && broker.mode === "reorder") {
        if (!held) return void (held = d);
        broker.mode = "pass";
        toUp(d, true);
        d = held;
      }
      toUp(d, bin);
    });
    up.on("message", (d, bin) => client.readyState === WebSocket.OPEN && client.send(d, { binary: bin }));
    up.on("close", () => client.close());
    client.on("close", () => up.close());
    up.on("error", () => client.terminate());
    client.on("error", () => up.terminate());
  });
  return broker;
}

describe("a broker that injects or reorders frames", { timeout: 90_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let broker: EvilBroker;
  let a: Node;
  let b: Node;
  let id: string;

  beforeAll(async () => {
    relay = await relayWithTap();
    broker = await evilBroker(relay.url);
    a = await startNode({ pairing: { rendezvous: broker.url } });
    b = await startNode({ pairing: { rendezvous: broker.url } });
    id = (await accept(b, await offer(a))).id!;
    await waitConnected(a, id);
    await waitConnected(b, id);
    await a.cli(["sentinel", "watch", "job:tamper", "--session", "ses_t", "--label", "tamper label"]);
    expect((await b.cli(["--remote", id, "sentinel", "list"])).stdout).toContain("tamper label");
  });
  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    await broker?.close();
    await relay?.close();
  });

  it("an injected frame closes the channel with a clear error; the link then recovers", async () => {
    broker.mode = "inject";
    const r = await b.cli(["--remote", id, "sentinel", "list"]);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain("tamper label");
    await waitFor("the daemon to report it", async () =>
      a.daemon.logs().includes("a frame failed authentication (injected, reordered, replayed or altered in transit)"),
    );
    await waitConnected(b, id);
    expect((await b.cli(["--remote", id, "sentinel", "list"])).stdout).toContain("tamper label");
  });

  it("two frames swapped close the channel; neither request is served", async () => {
    const before = (a.daemon.logs().match(/frame failed authentication/g) ?? []).length;
    broker.mode = "reorder";
    const [r1, r2] = await Promise.all([
      b.cli(["--remote", id, "sentinel", "list"]),
      b.cli(["--remote", id, "sentinel", "providers"]),
    ]);
    expect([r1.code, r2.code]).toEqual([1, 1]);
    await waitFor(
      "the daemon to report it",
      async () => (a.daemon.logs().match(/frame failed authentication/g) ?? []).length > before,
    );
    await waitConnected(b, id);
    expect((await b.cli(["--remote", id, "sentinel", "list"])).stdout).toContain("tamper label");
  });
});
