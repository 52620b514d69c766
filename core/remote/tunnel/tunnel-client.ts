/**
 * `svc serve --connect <wss-url>` and `tunnel.host` + `tunnel.autoconnect`: the daemon dials the
 * tunnel host (no inbound port), authenticates with its host token (`tunnel.token` else
 * credentials.json's `tunnel/token`; callers use the caller token derived from it), and serves
 * the requests the host forwards as non-loopback callers. Reconnects with backoff; `stop()`
 * closes the tunnel. With `tunnel.e2e`, only sealed requests are served.
 */
import WebSocket from "ws";
import type { DaemonEventBus } from "../../daemon/event-bus.js";
import type { Identity } from "../identity.js";
import { backoffDelay } from "../pairing/backoff.js";
import type { Forward } from "../loopback-forward.js";
import { E2E_CONTENT_TYPE, E2E_WINDOW_MS, E2eBusyError, openRequest } from "../web/tunnel-e2e.js";
import { ReplayCache } from "./replay-cache.js";
import type { TunnelRequestFrame, TunnelResponseFrame } from "../relay/tunnel-host.js";
import type { TunnelSettings } from "./settings.js";

export interface TunnelStatus {
  state: "connecting" | "connected" | "retrying" | "stopped";
  publicUrl?: string;
  e2e: boolean;
  attempts: number;
  lastError?: string;
}

export interface TunnelDeps extends TunnelSettings {
  identity: Identity;
  /** Serves a plain request and an opened sealed one: each as its own kind of remote caller (scope read without a token). */
  forward: { plain: Forward; sealed: Forward };
  log: (msg: string, fields?: Record<string, unknown>) => void;
  events: DaemonEventBus;
  now: () => number;
  /** Sealed requests remembered within the freshness window (default 100,000); more are refused with 503. */
  replayCacheMax?: number;
}

export class TunnelClient {
  status: TunnelStatus;
  private ws?: WebSocket;
  private stopped = false;
  private wake?: () => void;
  private done?: Promise<void>;
  private readonly seen: ReplayCache;
  /** The relay's cap on a body through the tunnel (its `ready` frame says; 1 MiB when it does not). */
  private maxBody = 1024 * 1024;

  constructor(private readonly d: TunnelDeps) {
    this.seen = new ReplayCache(E2E_WINDOW_MS, d.replayCacheMax ?? 100_000);
    this.status = { state: "connecting", e2e: d.e2e, attempts: 0 };
  }

  start(): void {
    this.done = this.loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.ws?.close(1000, "daemon stopping");
    this.wake?.();
    await this.done;
    this.status = { ...this.status, state: "stopped" };
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.status = { ...this.status, state: "connecting" };
      const opened = await this.session().catch((err: Error) => ((this.status.lastError = err.message), false));
      if (this.stopped) break;
      const delay = opened ? 0 : backoffDelay(this.status.attempts++);
      if (opened) this.status.attempts = 0;
      this.status = { ...this.status, state: "retrying" };
      this.d.log("tunnel closed; reconnecting", { inMs: delay, error: this.status.lastError });
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wake = () => (clearTimeout(t), resolve());
      });
    }
  }

  /** One connection; resolves true when it was open and closed, throws when it never opened. */
  private session(): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.d.url, {
        headers: { authorization: `Bearer ${this.d.token}` },
        maxPayload: 4 * 1024 * 1024,
      });
      this.ws = ws;
      let open = false;
      ws.on("unexpected-response", (_req, res) => {
        reject(
          new Error(
            `the tunnel host answered ${res.statusCode}${res.statusCode === 401 ? " (host token not accepted)" : ""}`,
          ),
        );
        res.resume();
        ws.terminate();
      });
      ws.on("error", (err) => (open ? undefined : reject(err)));
      ws.on("close", () => (open ? resolve(true) : reject(new Error("the tunnel host closed the connection"))));
      ws.on("message", (data: Buffer) => {
        let m: { t?: string; url?: string; id?: number; maxBodyBytes?: unknown };
        try {
          m = JSON.parse(data.toString("utf8"));
        } catch {
          return;
        }
        if (m.t === "ready" && typeof m.url === "string") {
          open = true;
          if (typeof m.maxBodyBytes === "number" && m.maxBodyBytes > 0) this.maxBody = m.maxBodyBytes;
          this.status = { state: "connected", publicUrl: m.url, e2e: this.d.e2e, attempts: 0 };
          this.d.log("tunnel open", { e2e: this.d.e2e });
          this.d.events.emit("tunnel:open", { url: m.url, e2e: this.d.e2e });
        } else if (m.t === "req") {
          void this.handle(m as unknown as TunnelRequestFrame).then(
            (r) => ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify(this.fits(r))),
          );
        }
      });
    });
  }

  /** An answer whose body the relay would refuse (or drop the tunnel for) becomes a 502 saying so. */
  private fits(r: TunnelResponseFrame): TunnelResponseFrame {
    if (Math.ceil((r.body.length * 3) / 4) <= this.maxBody) return r;
    const message = `the daemon's answer is larger than the relay's tunnel limit (${this.maxBody} bytes)`;
    return {
      t: "res",
      id: r.id,
      status: 502,
      headers: { "content-type": "application/json" },
      body: Buffer.from(JSON.stringify({ error: { code: "payload_too_large", message } })).toString("base64"),
    };
  }

  private async handle(f: TunnelRequestFrame): Promise<TunnelResponseFrame> {
    const json = (status: number, code: string, message: string): TunnelResponseFrame => ({
      t: "res",
      id: f.id,
      status,
      headers: { "content-type": "application/json" },
      body: Buffer.from(JSON.stringify({ error: { code, message } })).toString("base64"),
    });
    const body = Buffer.from(f.body ?? "", "base64");
    if (!this.d.e2e) {
      const r = await this.d.forward
        .plain({
          method: f.method,
          path: f.path,
          headers: f.headers,
          body: body.length ? body.toString("utf8") : undefined,
        })
        .catch(() => undefined);
      if (!r) return json(502, "connect", "the daemon did not answer the tunnelled request");
      return {
        t: "res",
        id: f.id,
        status: r.status,
        headers: r.contentType ? { "content-type": r.contentType } : {},
        body: Buffer.from(r.body).toString("base64"),
      };
    }
    if (f.method !== "POST" || !(f.headers["content-type"] ?? "").startsWith(E2E_CONTENT_TYPE)) {
      return json(
        403,
        "forbidden",
        `this tunnel is end-to-end encrypted: POST a request sealed to the daemon's key with content-type ${E2E_CONTENT_TYPE}`,
      );
    }
    let opened;
    try {
      opened = await openRequest(this.d.identity.key, new Uint8Array(body), this.d.now(), this.seen);
    } catch (err) {
      if (err instanceof E2eBusyError) return json(503, "unavailable", err.message);
      return json(400, "invalid_input", (err as Error).message);
    }
    const r = await this.d.forward.sealed(opened.request).catch((err: Error) => ({
      status: 502,
      body: JSON.stringify({ error: { code: "connect", message: err.message } }),
    }));
    const sealed = await opened.sealResponse({ status: r.status, body: r.body });
    return {
      t: "res",
      id: f.id,
      status: 200,
      headers: { "content-type": E2E_CONTENT_TYPE },
      body: Buffer.from(sealed).toString("base64"),
    };
  }
}
