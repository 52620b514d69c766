/**
 * `svc relay serve`: the rendezvous broker and the tunnel host in one small server.
 *
 *   GET  /health                         → {ok: true}
 *   WS   /v1/channel/<id>?role=offer|host|peer   rendezvous (binary frames relayed, never read)
 *   WS   /v1/tunnel  (Authorization: Bearer <host token>)  a daemon's tunnel
 *   ANY  /t/<tunnel id>/<path>           the public side of a tunnel (Bearer <caller token>)
 *
 * Logs connection events only: never a frame, a body, a token or a channel's traffic.
 */
import { createServer as createHttp, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttps } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { WebSocketServer, type WebSocket } from "ws";
import { ChannelTable, type Side } from "./channels.js";
import { Admission, type ChannelRole, type Refusal } from "./admission.js";
import { clientKey } from "./client-address.js";
import { RateLimiter, resolveLimits, type RelayLimits } from "./limits.js";
import { TunnelHost } from "./tunnel-host.js";

export interface RelayOptions {
  port: number;
  bind: string;
  tls?: { cert: string | Buffer; key: string | Buffer };
  /** Host tokens a daemon may open a tunnel with (callers use each one's caller token); none = tunnels are refused. */
  tunnelTokens?: readonly string[];
  /** Public base URL of tunnels (default: from the scheme and Host of the daemon's request). */
  publicUrl?: string;
  limits?: Partial<RelayLimits>;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  /** Sees every frame the relay forwards, with its channel's id (tests use it to prove what crosses). */
  tap?: (kind: "channel" | "tunnel", frame: Buffer | string, channel?: string) => void;
  now?: () => number;
}

export interface RunningRelay {
  port: number;
  /** The rendezvous URL (`ws://host:port/v1`) to give to `pairing.rendezvous`. */
  url: string;
  httpUrl: string;
  connections(): number;
  close(): Promise<void>;
}

const CHANNEL = /^\/v1\/channel\/([a-f0-9]{16,64})$/;
const ROLES: Record<string, Side> = { offer: "host", host: "host", peer: "peer" };

interface Live {
  ws: WebSocket;
  lastSeen: number;
}

export async function startRelay(o: RelayOptions): Promise<RunningRelay> {
  const limits = resolveLimits(o.limits);
  const now = o.now ?? Date.now;
  const log = o.log ?? (() => undefined);
  const channels = new ChannelTable(limits, o.tap ? (f, id) => o.tap!("channel", f, id) : undefined);
  const tunnels = new TunnelHost(o.tunnelTokens ?? [], limits, o.tap ? (f) => o.tap!("tunnel", f) : undefined);
  const admission = new Admission(limits, now);
  // A flood is refused cheaply; its log lines are bounded too (per address, per minute).
  const refusalLogs = new RateLimiter(10, now);
  const channelWss = new WebSocketServer({ noServer: true, maxPayload: limits.maxFrameBytes });
  const tunnelWss = new WebSocketServer({
    noServer: true,
    maxPayload: Math.ceil(limits.maxTunnelBodyBytes * 1.4) + 64 * 1024,
  });
  const live = new Set<Live>();
  const scheme = o.tls ? "https" : "http";

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://relay.invalid");
    if (url.pathname === "/health")
      return void res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ ok: true, channels: channels.size, connections: live.size }));
    const m = /^\/t\/([a-f0-9]{16})\/(.*)$/.exec(url.pathname);
    if (m) return void tunnels.serve(req, res, m[1]!, m[2]! + url.search).catch(() => res.destroy());
    res
      .writeHead(404, { "content-type": "application/json" })
      .end(JSON.stringify({ error: { code: "not_found", message: "no such relay route" } }));
  };
  const server: Server = o.tls ? createHttps({ cert: o.tls.cert, key: o.tls.key }, onRequest) : createHttp(onRequest);

  const track = (ws: WebSocket) => {
    const entry: Live = { ws, lastSeen: now() };
    live.add(entry);
    const seen = () => (entry.lastSeen = now());
    ws.on("message", seen);
    ws.on("pong", seen);
    ws.on("close", () => live.delete(entry));
    // An oversized or malformed frame: ws closes the connection (1009, 1002); it must not crash the relay.
    ws.on("error", () => undefined);
  };

  const refuse = (socket: Socket, status: number, message: string) => {
    socket.end(
      `HTTP/1.1 ${status} ${message}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(message)}\r\n\r\n${message}`,
    );
  };

  /** Logs a refusal with the client's address and the key it is counted by (never a token). */
  const logRefusal = (socket: Socket, key: string, message: string, status: number) => {
    if (refusalLogs.take(key)) log(message, { addr: socket.remoteAddress ?? "?", key, status });
  };
  const refused = (socket: Socket, key: string, what: string, r: Refusal) => {
    logRefusal(socket, key, `${what} refused: ${r.reason}`, r.status);
    refuse(socket, r.status, r.message);
  };

  server.on("upgrade", (req: IncomingMessage, socket: Socket, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://relay.invalid");
    const key = clientKey(req.socket.remoteAddress);
    const ch = CHANNEL.exec(url.pathname);
    if (ch) {
      const role = url.searchParams.get("role") ?? "";
      const side = ROLES[role];
      if (!side) return refuse(socket, 400, "role must be offer, host or peer");
      const refusal = admission.channel(key, role as ChannelRole, socket);
      if (refusal) return refused(socket, key, "channel", refusal);
      channelWss.handleUpgrade(req, socket, head, (ws) => {
        track(ws);
        log("channel joined", { role });
        channels.join(ch[1]!, side, ws, url.searchParams.get("wait") === "0");
      });
      return;
    }
    if (url.pathname === "/v1/tunnel") {
      // The token first: a daemon with a valid host token may use the slots kept for tunnels.
      const admitted = tunnels.admit(/^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1]);
      if (!("host" in admitted)) {
        logRefusal(socket, key, admitted.caller ? "tunnel refused: caller token" : "tunnel refused: token", 401);
        return refuse(socket, 401, admitted.refused);
      }
      const refusal = admission.tunnel(socket);
      if (refusal) return refused(socket, key, "tunnel", refusal);
      tunnelWss.handleUpgrade(req, socket, head, (ws) => {
        track(ws);
        log("tunnel opened");
        tunnels.attach(
          admitted.host,
          ws,
          o.publicUrl?.replace(/\/+$/, "") ?? `${scheme}://${req.headers.host ?? "relay.invalid"}`,
        );
      });
      return;
    }
    refuse(socket, 404, "no such relay route");
  });

  const sweep = setInterval(
    () => {
      const t = now();
      for (const e of live) {
        if (t - e.lastSeen > limits.idleMs) e.ws.terminate();
        else e.ws.ping();
      }
    },
    Math.max(1000, Math.floor(limits.idleMs / 3)),
  );
  sweep.unref();

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.bind, () => (server.off("error", reject), resolve()));
  });
  const port = (server.address() as AddressInfo).port;
  const host = o.bind.includes(":") ? `[${o.bind}]` : o.bind;
  log("relay listening", { bind: o.bind, port });
  return {
    port,
    url: `${o.tls ? "wss" : "ws"}://${host}:${port}/v1`,
    httpUrl: `${scheme}://${host}:${port}`,
    connections: () => live.size,
    async close() {
      clearInterval(sweep);
      for (const e of live) e.ws.terminate();
      channelWss.close();
      tunnelWss.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
