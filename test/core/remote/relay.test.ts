/**
 * The relay's bounds with real WebSocket connections on loopback: frame size, queue, connection
 * count, idle time, the offer rate limit, text frames, a busy channel, and logs without payloads.
 */
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { startRelay, type RelayOptions, type RunningRelay } from "../../../core/remote/relay/relay-server.js";

const relays: RunningRelay[] = [];
afterEach(async () => {
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

async function relay(o: Partial<RelayOptions> = {}): Promise<RunningRelay> {
  const r = await startRelay({ port: 0, bind: "127.0.0.1", ...o });
  relays.push(r);
  return r;
}

const CH = "0123456789abcdef0123456789abcdef";

interface Client {
  ws: WebSocket;
  texts: string[];
  frames: Buffer[];
  closed: Promise<{ code: number; reason: string }>;
}

function connect(url: string): Promise<Client> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const c: Client = {
      ws,
      texts: [],
      frames: [],
      closed: new Promise((r) => ws.on("close", (code, reason) => r({ code, reason: reason.toString() }))),
    };
    ws.on("message", (d: Buffer, bin) => (bin ? c.frames.push(d) : c.texts.push(d.toString())));
    ws.once("open", () => resolve(c));
    ws.once("unexpected-response", (_q, res) => reject(new Error(`status ${res.statusCode}`)));
    ws.once("error", reject);
  });
}

const until = async (cond: () => boolean) => {
  const end = Date.now() + 60_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met");
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe("relay", () => {
  it("matches the two ends of a channel and relays binary frames both ways, queueing what came first", async () => {
    const r = await relay();
    const host = await connect(`${r.url}/channel/${CH}?role=host`);
    await until(() => host.texts.includes('{"relay":"waiting"}'));
    host.ws.send(Buffer.from([1, 2, 3]));
    const peer = await connect(`${r.url}/channel/${CH}?role=peer`);
    await until(() => peer.frames.length === 1);
    expect([...peer.frames[0]!]).toEqual([1, 2, 3]);
    peer.ws.send(Buffer.from([9]));
    await until(() => host.frames.length === 1);
    expect(host.texts).toContain('{"relay":"paired"}');
    peer.ws.close();
    await until(() => host.texts.includes('{"relay":"peer-left"}'));
  });

  it("a second peer on a channel is refused as busy; a peer that must find a daemon is told none is there", async () => {
    const r = await relay();
    await connect(`${r.url}/channel/${CH}?role=host`);
    await connect(`${r.url}/channel/${CH}?role=peer`);
    const third = await connect(`${r.url}/channel/${CH}?role=peer`);
    expect((await third.closed).code).toBe(4409);
    const lonely = await connect(`${r.url}/channel/${"f".repeat(32)}?role=peer&wait=0`);
    expect((await lonely.closed).code).toBe(4404);
  });

  it("closes a connection that sends a frame over the size limit, or a text frame", async () => {
    const r = await relay({ limits: { maxFrameBytes: 1024 } });
    const big = await connect(`${r.url}/channel/${CH}?role=host`);
    big.ws.send(Buffer.alloc(2048));
    expect((await big.closed).code).toBe(1009);
    const text = await connect(`${r.url}/channel/${"a".repeat(32)}?role=host`);
    text.ws.send("hello");
    expect((await text.closed).code).toBe(1003);
  });

  it("bounds what waits for an absent end", async () => {
    const r = await relay({ limits: { maxQueueFrames: 3 } });
    const host = await connect(`${r.url}/channel/${CH}?role=host`);
    for (let i = 0; i < 4; i++) host.ws.send(Buffer.from([i]));
    expect((await host.closed).code).toBe(1008);
  });

  it("closes both ends when a receiver does not read (a slow consumer), instead of buffering for it", async () => {
    const r = await relay({ limits: { maxBufferedBytes: 64 * 1024 } });
    const host = await connect(`${r.url}/channel/${CH}?role=host`);
    const peer = await connect(`${r.url}/channel/${CH}?role=peer`);
    peer.ws.pause();
    const frame = Buffer.alloc(200 * 1024, 5);
    for (let i = 0; i < 200 && host.ws.readyState === WebSocket.OPEN; i++) {
      host.ws.send(frame);
      await new Promise((done) => setTimeout(done, 2));
    }
    expect((await host.closed).code).toBe(1013);
    peer.ws.resume();
    expect((await peer.closed).code).toBe(1013);
  });

  it("refuses connections over the limit, offers over the rate, and closes idle connections", async () => {
    let now = 0;
    const r = await relay({
      limits: {
        maxConnections: 2,
        maxConnectionsPerAddress: 2,
        reservedHostConnections: 0,
        offersPerMinute: 1,
        idleMs: 1000,
      },
      now: () => now,
    });
    await connect(`${r.url}/channel/${CH}?role=offer`);
    await expect(connect(`${r.url}/channel/${"b".repeat(32)}?role=offer`)).rejects.toThrow(/429/);
    const idle = await connect(`${r.url}/channel/${"c".repeat(32)}?role=host`);
    await expect(connect(`${r.url}/channel/${"d".repeat(32)}?role=host`)).rejects.toThrow(/503/);
    // Time passes on the relay's clock: the next sweep closes what has been silent too long.
    idle.ws.pause();
    now = 10_000;
    await idle.closed;
    await until(() => r.connections() < 2);
  });

  it("logs connection events and never a payload", async () => {
    const lines: string[] = [];
    const r = await relay({ log: (m, f) => lines.push(JSON.stringify({ m, ...f })) });
    const host = await connect(`${r.url}/channel/${CH}?role=host`);
    const peer = await connect(`${r.url}/channel/${CH}?role=peer`);
    host.ws.send(Buffer.from("payload-marker-99"));
    await until(() => peer.frames.length === 1);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain("payload-marker-99");
    expect(lines.join("\n")).not.toContain(CH);
  });
});
