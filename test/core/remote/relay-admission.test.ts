/**
 * Who the relay lets in, with real WebSocket connections from distinct loopback addresses
 * (127.0.0.x, each a client address of its own): a share of the slots per address, slots kept
 * for tunnels with a valid token, join rates per address and role, IPv4-mapped addresses counted
 * as IPv4, and a daemon asking the relay to drop a peer whose handshake it refused.
 */
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { clientKey } from "../../../core/remote/relay/client-address.js";
import { resolveLimits } from "../../../core/remote/relay/limits.js";
import { startRelay, type RelayOptions, type RunningRelay } from "../../../core/remote/relay/relay-server.js";

const TOKEN = "admission-tunnel-token";
const relays: RunningRelay[] = [];
const sockets: WebSocket[] = [];
afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await Promise.all(relays.splice(0).map((r) => r.close()));
});

async function relay(o: Partial<RelayOptions> = {}): Promise<RunningRelay & { lines: string[] }> {
  const lines: string[] = [];
  const r = await startRelay({
    port: 0,
    bind: "127.0.0.1",
    tunnelTokens: [TOKEN],
    log: (m, f) => lines.push(JSON.stringify({ m, ...f })),
    ...o,
  });
  relays.push(r);
  return Object.assign(r, { lines });
}

interface Dialled {
  status: number;
  message: string;
  ws: WebSocket;
  texts: string[];
  frames: Buffer[];
  closed: Promise<{ code: number; reason: string }>;
}

/** Dials `url` from `from` (a loopback address); resolves with 101 once open, or the refusal's status and message. */
function dial(url: string, from = "127.0.0.1", headers: Record<string, string> = {}): Promise<Dialled> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress: from, headers });
    sockets.push(ws);
    const texts: string[] = [];
    const frames: Buffer[] = [];
    const closed = new Promise<{ code: number; reason: string }>((r) =>
      ws.on("close", (code, reason) => r({ code, reason: reason.toString() })),
    );
    ws.on("message", (d: Buffer, bin) => (bin ? frames.push(d) : texts.push(String(d))));
    ws.once("open", () => resolve({ status: 101, message: "", ws, texts, frames, closed }));
    ws.once("unexpected-response", (_q, res) =>
      resolve({ status: res.statusCode ?? 0, message: res.statusMessage ?? "", ws, texts, frames, closed }),
    );
    ws.once("error", (err) => (err.message.startsWith("Unexpected server response") ? undefined : reject(err)));
  });
}

const until = async (what: string, cond: () => boolean) => {
  const end = Date.now() + 60_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

let n = 0;
const channel = (r: RunningRelay, role: string) =>
  `${r.url}/channel/${(++n).toString(16).padStart(32, "0")}?role=${role}`;

describe("relay admission", () => {
  it("one address gets its share of the slots and no more; a tunnel with a valid token still connects from it", async () => {
    // 100 connections: 5 per address (5 %), 25 kept for tunnels (a quarter, as it is under 32).
    const r = await relay({ limits: { maxConnections: 100, hostJoinsPerMinute: 1000 } });
    const got = [];
    for (let i = 0; i < 100; i++) got.push(await dial(channel(r, "host"), "127.0.0.2"));
    const open = got.filter((d) => d.status === 101);
    expect(open).toHaveLength(5);
    const refused = got.find((d) => d.status !== 101)!;
    expect(refused.status).toBe(429);
    expect(refused.message).toBe("at most 5 connections from one address (127.0.0.2)");
    expect((await dial(channel(r, "host"), "127.0.0.3")).status).toBe(101);
    const tunnel = await dial(`${r.url}/tunnel`, "127.0.0.2", { authorization: `Bearer ${TOKEN}` });
    expect(tunnel.status).toBe(101);
    await until("the tunnel to be ready", () => tunnel.texts.some((t) => t.includes('"ready"')));
    // The refusals are logged with the address, never the token; one line per address is enough to see a flood.
    const logs = r.lines.join("\n");
    expect(logs).toContain(
      '"m":"channel refused: connections per address","addr":"127.0.0.2","key":"127.0.0.2","status":429',
    );
    expect(logs).not.toContain(TOKEN);
    expect(r.lines.filter((l) => l.includes("refused")).length).toBeLessThanOrEqual(10);
    // A closed connection gives its slot back.
    open[0]!.ws.close();
    await open[0]!.closed;
    await until("the relay to count the close", () => r.connections() === 6);
    expect((await dial(channel(r, "host"), "127.0.0.2")).status).toBe(101);
    expect((await dial(channel(r, "host"), "127.0.0.2")).status).toBe(429);
  });

  it("many addresses filling the relay leave the reserved slots to tunnels with a valid token", async () => {
    const r = await relay({ limits: { maxConnections: 40, hostJoinsPerMinute: 1000 } });
    // 20 addresses try 2 connections each (their share): 30 fit, the last 10 are kept for tunnels.
    const got = [];
    for (let a = 2; a < 22; a++) for (let i = 0; i < 2; i++) got.push(await dial(channel(r, "host"), `127.0.0.${a}`));
    expect(got.filter((d) => d.status === 101)).toHaveLength(30);
    const full = got.filter((d) => d.status !== 101);
    expect(full.every((d) => d.status === 503)).toBe(true);
    expect(full[0]!.message).toBe(
      "relay at its connection limit: 30 channel connections are open (10 more are kept for tunnels)",
    );
    // A wrong token is told so (401), not sent to the capacity check.
    expect((await dial(`${r.url}/tunnel`, "127.0.0.30", { authorization: "Bearer not-the-token" })).status).toBe(401);
    const tunnel = await dial(`${r.url}/tunnel`, "127.0.0.2", { authorization: `Bearer ${TOKEN}` });
    expect(tunnel.status).toBe(101);
    await until("the tunnel to be ready", () => tunnel.texts.some((t) => t.includes('"ready"')));
  });

  it("rate-limits daemon (role=host) and peer joins per address", async () => {
    let now = 1_000_000;
    const r = await relay({ limits: { hostJoinsPerMinute: 3, peerJoinsPerMinute: 2 }, now: () => now });
    for (let i = 0; i < 3; i++) expect((await dial(channel(r, "host"), "127.0.0.2")).status).toBe(101);
    const host = await dial(channel(r, "host"), "127.0.0.2");
    expect([host.status, host.message]).toEqual([429, "at most 3 role=host joins per minute from one address"]);
    expect((await dial(channel(r, "host"), "127.0.0.3")).status).toBe(101);
    for (let i = 0; i < 2; i++) expect((await dial(channel(r, "peer"), "127.0.0.2")).status).toBe(101);
    const peer = await dial(channel(r, "peer"), "127.0.0.2");
    expect([peer.status, peer.message]).toEqual([429, "at most 2 role=peer joins per minute from one address"]);
    now += 60_000;
    expect((await dial(channel(r, "host"), "127.0.0.2")).status).toBe(101);
    expect((await dial(channel(r, "peer"), "127.0.0.2")).status).toBe(101);
  });

  it("counts an IPv4-mapped IPv6 client as its IPv4 address, and IPv6 clients by /64", async () => {
    expect(clientKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(clientKey("203.0.113.7")).toBe("203.0.113.7");
    expect(clientKey("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8:1:2:bbbb::9")).toBe("2001:db8:1:2::/64");
    expect(clientKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
    expect(clientKey("fe80::1%eth0")).toBe("fe80::/64");
    // A dual-stack relay sees IPv4 clients as ::ffff:a.b.c.d: they share the IPv4 address's allowance.
    const r = await relay({ bind: "::", limits: { maxConnections: 20, hostJoinsPerMinute: 1000 } });
    const url = (role: string) => channel(r, role).replace("[::]", "127.0.0.1");
    expect((await dial(url("host"), "127.0.0.2")).status).toBe(101);
    const second = await dial(url("host"), "127.0.0.2");
    expect([second.status, second.message]).toEqual([429, "at most 1 connections from one address (127.0.0.2)"]);
  });

  it("limits that contradict are refused with both named", () => {
    expect(() => resolveLimits({ maxConnections: 10, reservedHostConnections: 10 })).toThrow(
      "reservedHostConnections (10) must be less than maxConnections (10)",
    );
    expect(() => resolveLimits({ maxConnections: 10, maxConnectionsPerAddress: 11 })).toThrow(
      "maxConnectionsPerAddress (11) cannot exceed maxConnections (10)",
    );
    expect(resolveLimits({})).toMatchObject({
      maxConnections: 1000,
      maxConnectionsPerAddress: 50,
      reservedHostConnections: 32,
    });
  });

  it("drops the peer at the daemon's request and keeps the daemon waiting: the next peer joins at once", async () => {
    const r = await relay();
    const url = channel(r, "offer").replace("role=offer", "role=");
    const daemon = await dial(url + "offer");
    const wrong = await dial(url + "peer&wait=0", "127.0.0.2");
    await until("paired", () => daemon.texts.includes('{"relay":"paired"}'));
    // The wrong peer would hold the channel; the daemon asks the relay to drop it.
    daemon.ws.send(JSON.stringify({ relay: "drop-peer" }));
    expect(await wrong.closed).toEqual({ code: 4403, reason: "handshake refused by the daemon" });
    expect(wrong.texts).toContain(
      JSON.stringify({ relay: "refused", message: "the daemon refused this end's handshake" }),
    );
    await until("the daemon to see it leave", () => daemon.texts.includes('{"relay":"peer-left"}'));
    const right = await dial(url + "peer&wait=0", "127.0.0.3");
    await until("paired again", () => right.texts.includes('{"relay":"paired"}'));
    right.ws.send(Buffer.from([1, 2, 3]));
    await until("the daemon to get the new peer's frame", () => daemon.frames.length === 1);
    // A peer cannot drop anyone: its text frame closes it, as any other text frame does.
    right.ws.send(JSON.stringify({ relay: "drop-peer" }));
    expect((await right.closed).code).toBe(1003);
    expect(daemon.ws.readyState).toBe(WebSocket.OPEN);
  });
});
