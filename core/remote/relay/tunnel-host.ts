/**
 * The tunnel host: a daemon dials in (`/v1/tunnel`, `Authorization: Bearer <host token>`) and
 * the relay serves its HTTP API at `/t/<id>/…` on the public side. A public request must carry
 * the tunnel's caller token (derived from the host token, see caller-token.ts); the relay checks
 * it and never forwards it. The two never stand in for each other: a caller token cannot open or
 * replace a tunnel, and the host token is refused on the public side. Requests and answers cross
 * the tunnel as JSON text frames; with end-to-end encryption their bodies are ciphertext it cannot read.
 */
import { createHash } from "node:crypto";
import { secretEquals } from "../../daemon/secret-equals.js";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { WebSocket } from "ws";
import { callerTokenFor } from "../tunnel/caller-token.js";
import type { RelayLimits } from "./limits.js";

export interface TunnelRequestFrame {
  t: "req";
  id: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface TunnelResponseFrame {
  t: "res";
  id: number;
  status: number;
  headers?: Record<string, string>;
  body: string;
}

/** A host token the relay accepts and the caller token derived from it. */
export interface HostToken {
  readonly host: string;
  readonly caller: string;
}

/** Whom a `/v1/tunnel` bearer token proves: a host this relay accepts, or why it is refused. */
export type HostAdmission = { host: HostToken } | { refused: string; caller: boolean };

interface Tunnel {
  ws: WebSocket;
  token: HostToken;
  nextId: number;
  pending: Map<number, (r: TunnelResponseFrame | undefined) => void>;
  /** Public requests still sending their bodies: they hold buffers too, so they count as waiting. */
  reading: number;
}

/** Headers that never cross the tunnel: hop-by-hop, the caller token, cookies. */
const DROPPED = new Set([
  "authorization",
  "host",
  "connection",
  "keep-alive",
  "upgrade",
  "transfer-encoding",
  "te",
  "trailer",
  "proxy-authorization",
  "cookie",
  "content-length",
]);

export function tunnelIdFor(token: string): string {
  return createHash("sha256")
    .update("svc-tunnel/1 " + token)
    .digest("hex")
    .slice(0, 16);
}

export class TunnelHost {
  private readonly tunnels = new Map<string, Tunnel>();
  private readonly hosts: readonly HostToken[];

  constructor(
    hostTokens: readonly string[],
    private readonly limits: RelayLimits,
    private readonly tap?: (frame: string) => void,
  ) {
    this.hosts = hostTokens.map((host) => ({ host, caller: callerTokenFor(host) }));
  }

  /**
   * Checks a dialling daemon's bearer token: only a host token opens (or replaces) a tunnel.
   * A caller token is refused first, whatever the host list holds, so it can never register.
   */
  admit(bearer: string | undefined): HostAdmission {
    if (!bearer) return { refused: "a tunnel needs Authorization: Bearer <host token>", caller: false };
    if (this.hosts.some((h) => secretEquals(h.caller, bearer))) {
      return {
        refused:
          "this is a tunnel's caller token: it calls the tunnel's public URL and can never open or replace the tunnel; the daemon opens it with its host token (tunnel.token)",
        caller: true,
      };
    }
    const host = this.hosts.find((h) => secretEquals(h.host, bearer));
    return host ? { host } : { refused: "tunnel host token not accepted by this relay", caller: false };
  }

  /** Opens the tunnel of a host `admit` accepted, replacing that host token's earlier connection. */
  attach(token: HostToken, ws: WebSocket, publicBase: string): void {
    const id = tunnelIdFor(token.host);
    this.tunnels.get(id)?.ws.close(4000, "replaced by a new connection");
    const tunnel: Tunnel = { ws, token, nextId: 1, pending: new Map(), reading: 0 };
    this.tunnels.set(id, tunnel);
    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) return void ws.close(1003, "tunnel frames are JSON text");
      let m: TunnelResponseFrame;
      try {
        m = JSON.parse(data.toString("utf8")) as TunnelResponseFrame;
      } catch {
        return void ws.close(1007, "malformed tunnel frame");
      }
      if (m.t !== "res") return;
      this.tap?.(data.toString("utf8"));
      const done = tunnel.pending.get(m.id);
      tunnel.pending.delete(m.id);
      done?.(m);
    });
    ws.on("close", () => {
      for (const done of tunnel.pending.values()) done(undefined);
      tunnel.pending.clear();
      if (this.tunnels.get(id) === tunnel) this.tunnels.delete(id);
    });
    // The body cap goes with it, so the daemon answers a larger body with a 502 of its own.
    ws.send(
      JSON.stringify({ t: "ready", url: `${publicBase}/t/${id}/`, maxBodyBytes: this.limits.maxTunnelBodyBytes }),
    );
  }

  /** Serves `/t/<id>/<rest>` on the public side. */
  async serve(req: IncomingMessage, res: ServerResponse, id: string, rest: string): Promise<void> {
    const tunnel = this.tunnels.get(id);
    if (!tunnel) return reply(res, 502, "tunnel_offline", "no daemon is connected to this tunnel");
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? "")?.[1];
    if (bearer && secretEquals(bearer, tunnel.token.host)) {
      return reply(
        res,
        401,
        "unauthorized",
        "this is the tunnel's host token, the daemon's own credential: never give it to callers. Callers present the caller token (`svc tunnel caller-token` on the daemon's machine prints it)",
      );
    }
    if (!bearer || !secretEquals(bearer, tunnel.token.caller)) {
      return reply(
        res,
        401,
        "unauthorized",
        "this tunnel needs its caller token (Authorization: Bearer <caller token>; `svc tunnel caller-token` on the daemon's machine prints it)",
      );
    }
    if (tunnel.pending.size + tunnel.reading >= this.limits.maxTunnelInFlight)
      return reply(res, 503, "unavailable", "too many requests waiting on this tunnel");
    tunnel.reading++;
    const body = await readCapped(req, this.limits.maxTunnelBodyBytes).finally(() => tunnel.reading--);
    if (body === undefined) {
      // The rest of the body is not read: close the connection once the answer is out.
      res.setHeader("connection", "close");
      res.once("finish", () => req.destroy());
      return reply(
        res,
        413,
        "payload_too_large",
        `request bodies through the tunnel are capped at ${this.limits.maxTunnelBodyBytes} bytes`,
      );
    }
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) if (!DROPPED.has(k) && typeof v === "string") headers[k] = v;
    const id2 = tunnel.nextId++;
    const frame: TunnelRequestFrame = {
      t: "req",
      id: id2,
      method: req.method ?? "GET",
      path: "/" + rest,
      headers,
      body: body.toString("base64"),
    };
    const answer = new Promise<TunnelResponseFrame | undefined>((resolve) => {
      const timer = setTimeout(() => (tunnel.pending.delete(id2), resolve(undefined)), this.limits.tunnelTimeoutMs);
      tunnel.pending.set(id2, (r) => (clearTimeout(timer), resolve(r)));
    });
    const text = JSON.stringify(frame);
    this.tap?.(text);
    tunnel.ws.send(text);
    const r = await answer;
    if (!r) return reply(res, 504, "tunnel_timeout", "the daemon behind the tunnel did not answer");
    const out = Buffer.from(r.body ?? "", "base64");
    const h: Record<string, string> = {};
    const ct = r.headers?.["content-type"];
    if (ct) h["content-type"] = ct;
    // Never a cut body passed off as the whole answer.
    if (out.length > this.limits.maxTunnelBodyBytes)
      return reply(
        res,
        502,
        "payload_too_large",
        `the daemon's answer is larger than the relay's tunnel limit (${this.limits.maxTunnelBodyBytes} bytes)`,
      );
    res.writeHead(r.status, h).end(out);
  }
}

function reply(res: ServerResponse, status: number, code: string, message: string): void {
  res
    .writeHead(status, { "content-type": "application/json; charset=utf-8" })
    .end(JSON.stringify({ error: { code, message } }));
}

/** The request body, or `undefined` as soon as it is (or is announced as) larger than `max`. */
function readCapped(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > max) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= max) return void chunks.push(c);
      req.off("data", onData);
      req.pause();
      resolve(undefined);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
