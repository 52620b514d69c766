/**
 * Streams through the encrypted channel: the daemon's real `/events` route on a real loopback
 * HTTP server, forwarded by the real forwarder (loopback-forward.ts) into a SecureChannel whose
 * other end follows it (and the pair page's ChannelTransport on top). Events arrive in order; the
 * caller's cancel, a closed link and a backlog over the bound each close the daemon's stream; the
 * transport resumes from its last event id; large messages cross in frames under the relay's limit.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DaemonEventBus } from "../../../core/daemon/event-bus.js";
import { eventsRoute } from "../../../core/daemon/events-module.js";
import type { RouteRequest } from "../../../core/plugin-api/http.js";
import { makeForwarder } from "../../../core/remote/loopback-forward.js";
import { SecureChannel, type ChannelOptions, type Serve, type StreamEvent } from "../../../core/remote/web/channel.js";
import { ChannelTransport } from "../../../core/remote/web/channel-transport.js";
import { initiate, respond } from "../../../core/remote/web/handshake.js";
import type { PeerLink } from "../../../core/remote/web/peer.js";
import { generateKeyPair, randomBytes } from "../../../core/remote/web/primitives.js";
import { waitFor } from "../../e2e/remote/helpers.js";

/** Counts the live subscriptions of `/events` streams: one per stream the daemon keeps open. */
class CountingBus extends DaemonEventBus {
  live = 0;
  override subscribe(listener: Parameters<DaemonEventBus["subscribe"]>[0]) {
    this.live++;
    const off = super.subscribe(listener);
    return () => (this.live--, off());
  }
}

async function keys() {
  const host = await generateKeyPair();
  const peer = await generateKeyPair();
  const psk = randomBytes(32);
  const hs = await initiate({ prologue: "p", psk, staticKey: peer, remoteStatic: host.publicKey, meta: null });
  const r = await respond({
    prologue: "p",
    psk,
    staticKey: host,
    msg1: hs.msg1,
    meta: { scope: "read" },
    accept: () => undefined,
  });
  return { peer: (await hs.finish(r.msg2)).keys, host: r.keys };
}

/** Two channel ends; frames cross asynchronously, in order, and their sizes are recorded. */
async function wired(serve: Serve, options: ChannelOptions = {}) {
  const k = await keys();
  const sizes: number[] = [];
  const ends: { peer?: SecureChannel; host?: SecureChannel } = {};
  const carry = (to: () => SecureChannel | undefined) => (f: Uint8Array) => {
    sizes.push(f.length);
    setImmediate(
      () =>
        void to()!
          .receive(f as never)
          .catch(() => undefined),
    );
  };
  ends.peer = new SecureChannel(
    k.peer,
    carry(() => ends.host),
  );
  ends.host = new SecureChannel(
    k.host,
    carry(() => ends.peer),
    serve,
    options,
  );
  return { peer: ends.peer, host: ends.host, sizes };
}

let bus: CountingBus;
let server: Server;
let serve: Serve;

beforeEach(async () => {
  bus = new CountingBus();
  const route = eventsRoute(bus, new Set<ServerResponse>());
  server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://d.invalid");
    if (url.pathname === "/big") return void res.writeHead(200).end("x".repeat(600_000));
    route.handler({ headers: req.headers, query: url.searchParams, res } as unknown as RouteRequest);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  serve = makeForwarder(
    () => ({ port, bind: "127.0.0.1", forwardKey: "k" }),
    () => ({ kind: "pairing", pairingId: "p1", scope: "read" }),
  );
});

afterEach(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

function follow(peer: SecureChannel, headers?: Record<string, string>) {
  const events: StreamEvent[] = [];
  let opened = false;
  const handle = peer.stream(
    { method: "GET", path: "/events", ...(headers ? { headers } : {}) },
    { onOpen: () => (opened = true), onEvent: (e) => events.push(e) },
  );
  return { events, handle, opened: () => opened };
}

describe("streams through the encrypted channel", { timeout: 30_000 }, () => {
  it("carries the daemon's events in order, and the caller's cancel closes the daemon's stream", async () => {
    const w = await wired(serve);
    const s = follow(w.peer);
    await waitFor("the stream to open", async () => s.opened() && bus.live === 1);
    for (const n of [1, 2, 3]) bus.emit("sentinel:created", { sentinelId: `sen_${n}` });
    await waitFor("three events", async () => s.events.length === 3);
    expect(s.events.map((e) => [e.id, e.event, (JSON.parse(e.data) as { data: unknown }).data])).toEqual([
      ["1", "sentinel:created", { sentinelId: "sen_1" }],
      ["2", "sentinel:created", { sentinelId: "sen_2" }],
      ["3", "sentinel:created", { sentinelId: "sen_3" }],
    ]);
    s.handle.cancel();
    expect(JSON.parse((await s.handle.done).body)).toEqual({ ended: "cancelled" });
    await waitFor("the daemon's stream to close", async () => bus.live === 0);
  });

  it("closes the daemon's stream when the link closes", async () => {
    const w = await wired(serve);
    const s = follow(w.peer);
    await waitFor("the stream to open", async () => s.opened() && bus.live === 1);
    w.host.fail("the paired end left");
    await waitFor("the daemon's stream to close", async () => bus.live === 0);
    w.peer.fail("the broker connection closed");
    await expect(s.handle.done).rejects.toThrow(/broker connection closed/);
  });

  it("ends a stream that falls behind instead of buffering it, and the transport resumes from its last event id", async () => {
    let behind = false;
    const w = await wired(serve, { buffered: () => (behind ? 2 * 1024 * 1024 : 0) });
    const states: string[] = [];
    const link = { channel: w.peer, meta: { scope: "operate" }, socket: { close: () => undefined } };
    const transport = new ChannelTransport({
      label: "test",
      link: link as unknown as PeerLink,
      reconnect: async () => link as unknown as PeerLink,
      scope: "read",
      retryMs: 10,
      onState: (s, why) => states.push(why ? `${s}: ${why}` : s),
    });
    expect(transport.scope).toBe("operate");
    const seen: number[] = [];
    const stop = transport.subscribe((e) => seen.push((e.data as { seq: number }).seq));
    await waitFor("the stream to open", async () => states.includes("connected") && bus.live === 1);
    bus.emit("a");
    await waitFor("the first event", async () => seen.length === 1);
    behind = true;
    bus.emit("b");
    await waitFor("the stream to end as overflow", async () => states.some((s) => /overflow/.test(s)));
    await waitFor("the daemon's stream to close", async () => bus.live === 0);
    bus.emit("c");
    behind = false;
    // Reopened with Last-Event-ID: the events it missed come first, none twice.
    await waitFor("the missed events", async () => seen.length === 3);
    expect(seen).toEqual([1, 2, 3]);
    stop();
    await waitFor("the daemon's stream to close", async () => bus.live === 0);
  });

  it("serves at most maxStreams streams at once; more are answered 503", async () => {
    const w = await wired(serve, { maxStreams: 2 });
    const a = follow(w.peer);
    const b = follow(w.peer);
    await waitFor("two streams", async () => bus.live === 2);
    const c = follow(w.peer);
    const refused = await c.handle.done;
    expect(refused.status).toBe(503);
    expect(refused.body).toContain("already carries 2 streams");
    expect(c.opened()).toBe(false);
    a.handle.cancel();
    b.handle.cancel();
    await waitFor("the streams to close", async () => bus.live === 0);
  });

  it("answers a stream request whose answer is not a stream as an ordinary request", async () => {
    const w = await wired(serve);
    const s = w.peer.stream({ method: "GET", path: "/big" }, { onEvent: () => undefined });
    expect((await s.done).body).toHaveLength(600_000);
  });

  it("carries a message larger than the relay's frame limit in parts, each frame under it", async () => {
    const w = await wired(serve);
    const r = await w.peer.request({ method: "GET", path: "/big" });
    expect(r.body).toBe("x".repeat(600_000));
    expect(Math.max(...w.sizes)).toBeLessThan(256 * 1024);
    expect(w.sizes.length).toBeGreaterThan(3);
  });
});
