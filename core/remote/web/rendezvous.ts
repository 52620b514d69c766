/**
 * A WebSocket to one rendezvous channel of the relay, for the browser's WebSocket and the `ws`
 * library alike (both give `binaryType`, `onmessage`, `send`). The relay speaks only in text
 * frames (`{"relay":"paired"|"waiting"|"peer-left"|"refused"|"error"}`); everything between the
 * two ends is binary and opaque to it. The daemon's end may ask it to drop the peer (`dropPeer`).
 */
import type { Bytes } from "./bytes.js";

export interface WsLike {
  binaryType: string;
  readyState: number;
  /** Bytes given to `send` and not yet written to the network (browser WebSocket and `ws` alike). */
  bufferedAmount?: number;
  send(data: Uint8Array | string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export type WsFactory = (url: string) => WsLike;

export type Role = "offer" | "host" | "peer";

export class RendezvousError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RendezvousError";
  }
}

/** The URL of channel `channel` on the broker `rendezvous` (`ws[s]://host[:port]/v1`). */
export function channelUrl(rendezvous: string, channel: string, role: Role, mustFind = false): string {
  return `${rendezvous.replace(/\/+$/, "")}/channel/${channel}?role=${role}${mustFind ? "&wait=0" : ""}`;
}

export class RendezvousSocket {
  onControl: (event: string, message?: string) => void = () => undefined;
  /** Until a handler is set, frames wait in a bounded backlog (the `ws` library can deliver them in the tick that opens the socket). */
  onFrame: (frame: Bytes) => void = (f) => {
    if (this.backlog.length < 64) this.backlog.push(f);
  };
  onClose: (reason: string) => void = () => undefined;
  closed = false;
  /** Control events seen so far (the first may arrive before anyone waits for it). */
  private readonly seen = new Set<string>();
  private readonly backlog: Bytes[] = [];
  private refusal?: string;
  private closeReason?: string;

  private constructor(private readonly ws: WsLike) {}

  static open(factory: WsFactory, url: string, timeoutMs = 10_000): Promise<RendezvousSocket> {
    return new Promise((resolve, reject) => {
      let ws: WsLike;
      try {
        ws = factory(url);
      } catch (err) {
        reject(new RendezvousError(`cannot open the broker connection: ${(err as Error).message}`));
        return;
      }
      ws.binaryType = "arraybuffer";
      const sock = new RendezvousSocket(ws);
      const timer = setTimeout(() => {
        ws.close();
        reject(new RendezvousError(`the broker did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      let opened = false;
      let error: string | undefined;
      ws.onopen = () => {
        opened = true;
        clearTimeout(timer);
        resolve(sock);
      };
      // The `ws` library says why (e.g. "Unexpected server response: 404"); a browser does not.
      ws.onerror = (ev) => {
        const m = (ev as { message?: unknown } | null)?.message;
        if (typeof m === "string" && m) error = m;
      };
      ws.onclose = (ev) => {
        clearTimeout(timer);
        sock.closed = true;
        const reason = ev.reason || `closed (code ${ev.code}${error ? `: ${error}` : ""})`;
        sock.closeReason = reason;
        reject(
          new RendezvousError(
            opened
              ? `the broker refused or dropped the connection: ${reason}`
              : `could not connect to the relay at ${url.split("/channel/")[0]}: ${reason}. Is a relay (\`svc relay serve\`) running there, and is this the URL it prints (ending in /v1)?`,
          ),
        );
        sock.onClose(reason);
      };
      ws.onmessage = (ev) => {
        if (typeof ev.data === "string") {
          try {
            const m = JSON.parse(ev.data) as { relay?: string; message?: string };
            if (typeof m.relay === "string") {
              sock.seen.add(m.relay);
              if (m.relay === "error") sock.refusal = m.message ?? "error";
              sock.onControl(m.relay, m.message);
            }
          } catch {
            /* not from the relay: ignored */
          }
          return;
        }
        const data = ev.data as ArrayBuffer | Uint8Array | Uint8Array[];
        const bytes =
          data instanceof ArrayBuffer
            ? new Uint8Array(data)
            : Array.isArray(data)
              ? concatAll(data)
              : new Uint8Array(data);
        sock.onFrame(bytes as Bytes);
      };
    });
  }

  /** Hands every frame, those already waiting first, to `handler`. */
  takeFrames(handler: (frame: Bytes) => void): void {
    this.onFrame = handler;
    for (const f of this.backlog.splice(0)) handler(f);
  }

  /** Whether the relay already sent control event `event` on this socket. */
  hasSeen(event: string): boolean {
    return this.seen.has(event);
  }

  /** Bytes this end has sent that still wait in the socket's buffer. */
  get buffered(): number {
    return this.ws.bufferedAmount ?? 0;
  }

  send(frame: Uint8Array): void {
    if (!this.closed) this.ws.send(frame);
  }

  /** The daemon's end: asks the relay to close the peer whose handshake it refused, and to keep this end waiting. */
  dropPeer(): void {
    if (!this.closed) this.ws.send(JSON.stringify({ relay: "drop-peer" }));
  }

  close(reason = "done"): void {
    this.closed = true;
    this.ws.close(1000, reason);
  }

  /** Resolves on the next control event named `event`; rejects when the socket closes first. */
  waitFor(event: string, timeoutMs: number): Promise<void> {
    if (this.seen.has(event)) return Promise.resolve();
    if (this.refusal !== undefined) return Promise.reject(new RendezvousError(`the broker refused: ${this.refusal}`));
    if (this.closed)
      return Promise.reject(new RendezvousError(`the broker closed the connection: ${this.closeReason ?? "closed"}`));
    return new Promise((resolve, reject) => {
      const prevC = this.onControl;
      const prevX = this.onClose;
      const done = () => ((this.onControl = prevC), (this.onClose = prevX), clearTimeout(timer));
      const timer = setTimeout(
        () => (
          done(),
          reject(
            new RendezvousError(
              `the other end did not join the broker channel within ${timeoutMs} ms (is the daemon running and connected?)`,
            ),
          )
        ),
        timeoutMs,
      );
      this.onControl = (e, m) => {
        prevC(e, m);
        if (e === event) done(), resolve();
        else if (e === "error") done(), reject(new RendezvousError(`the broker refused: ${m ?? "error"}`));
      };
      this.onClose = (r) => (done(), prevX(r), reject(new RendezvousError(`the broker closed the connection: ${r}`)));
    });
  }

  /** Resolves with the next binary frame. */
  nextFrame(timeoutMs: number): Promise<Bytes> {
    const early = this.backlog.shift();
    if (early) return Promise.resolve(early);
    return new Promise((resolve, reject) => {
      const prevF = this.onFrame;
      const prevX = this.onClose;
      const done = () => ((this.onFrame = prevF), (this.onClose = prevX), clearTimeout(timer));
      const timer = setTimeout(
        () => (done(), reject(new RendezvousError(`no answer through the broker within ${timeoutMs} ms`))),
        timeoutMs,
      );
      this.onFrame = (f) => (done(), resolve(f));
      this.onClose = (r) => (done(), prevX(r), reject(new RendezvousError(`the broker closed the connection: ${r}`)));
    });
  }
}

function concatAll(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, at), (at += p.length);
  return out;
}
