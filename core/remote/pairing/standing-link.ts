/**
 * One pairing's standing connection through the broker, kept open with backoff. The `host` end
 * (the daemon that made the offer) waits on the channel and answers handshakes from the paired
 * key only; the `peer` end joins, handshakes and carries `svc --remote` calls. Each end reports
 * its state: off, connecting, waiting (on the broker, the other end absent), connected, retrying.
 */
import WebSocket from "ws";
import { fromB64u, toHex, type Bytes } from "../web/bytes.js";
import { SecureChannel, type RemoteRequest, type RemoteResponse, type Serve } from "../web/channel.js";
import { HandshakeError, respond } from "../web/handshake.js";
import { connectAsPeer } from "../web/peer.js";
import type { KeyPair } from "../web/primitives.js";
import { channelUrl, RendezvousError, RendezvousSocket, type WsFactory } from "../web/rendezvous.js";
import { equalBytes } from "../web/bytes.js";
import { backoffDelay } from "./backoff.js";
import { linkPrologue } from "../web/pairing.js";
import type { PairingRecord } from "./store.js";

export type LinkState = "off" | "connecting" | "waiting" | "connected" | "retrying";

export interface LinkStatus {
  state: LinkState;
  since: number;
  attempts: number;
  lastError?: string;
  nextAttemptAt?: number;
}

export interface LinkDeps {
  key: KeyPair;
  fingerprint: string;
  now: () => number;
  serve: Serve;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  backoffCapMs?: number;
}

export const wsFactory: WsFactory = (url) => new WebSocket(url, { maxPayload: 8 * 1024 * 1024 }) as never;

export class StandingLink {
  status: LinkStatus;
  private channel?: SecureChannel;
  private socket?: RendezvousSocket;
  private stopped = true;
  private wake?: () => void;
  private readonly seenOpenings = new Set<string>();
  private readonly waiters = new Set<() => void>();

  constructor(
    public record: PairingRecord,
    private readonly deps: LinkDeps,
  ) {
    this.status = { state: "off", since: deps.now(), attempts: 0 };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.socket?.close("stopped");
    this.channel?.fail("the pairing's link was stopped");
    this.wake?.();
    this.set("off");
  }

  /** Sends a request through the link (peer end), waiting up to `waitMs` for it to connect. */
  async request(r: RemoteRequest, waitMs = 15_000, timeoutMs = 60_000): Promise<RemoteResponse> {
    if (this.stopped) this.start();
    if (this.status.state !== "connected") {
      this.wake?.();
      await new Promise<void>((resolve) => {
        const done = () => (clearTimeout(timer), this.waiters.delete(done), resolve());
        const timer = setTimeout(done, waitMs);
        this.waiters.add(done);
      });
    }
    const ch = this.channel;
    if (!ch || this.status.state !== "connected") {
      throw new RendezvousError(
        `pairing ${this.record.id} is not connected (${this.status.state}${this.status.lastError ? `: ${this.status.lastError}` : ""})`,
      );
    }
    return ch.request(r, timeoutMs);
  }

  private set(state: LinkState, extra: Partial<LinkStatus> = {}): void {
    // The last error stays visible until the link connects again.
    const lastError = state === "connected" || state === "off" ? undefined : this.status.lastError;
    this.status = {
      state,
      since: this.deps.now(),
      attempts: this.status.attempts,
      ...(lastError !== undefined ? { lastError } : {}),
      ...extra,
    };
    if (state === "connected") for (const w of [...this.waiters]) w();
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.set("connecting");
      let failed = false;
      try {
        await (this.record.role === "host" ? this.hostSession() : this.peerSession());
      } catch (err) {
        failed = true;
        if (this.stopped) break;
        this.status.lastError = (err as Error).message;
        this.deps.log("pairing link failed", { pairing: this.record.id, error: (err as Error).message });
      }
      this.channel = undefined;
      this.socket = undefined;
      if (this.stopped) break;
      const delay = failed ? backoffDelay(this.status.attempts++, this.deps.backoffCapMs) : 0;
      if (!failed) this.status.attempts = 0;
      this.set("retrying", { nextAttemptAt: this.deps.now() + delay });
      for (const w of [...this.waiters]) w();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => (clearTimeout(timer), resolve());
      });
      this.wake = undefined;
    }
  }

  /** Resolves when the session ends cleanly (the other end left), throws when it failed. */
  private async hostSession(): Promise<void> {
    const socket = await RendezvousSocket.open(
      wsFactory,
      channelUrl(this.record.rendezvous, this.record.channel, "host"),
    );
    this.socket = socket;
    // Stopped while the connection was opening: nothing else would ever close it.
    if (this.stopped) return void socket.close("stopped");
    const peerKey = fromB64u(this.record.peerKey)!;
    const psk = fromB64u(this.record.secret)!;
    await new Promise<void>((resolve, reject) => {
      let channel: SecureChannel | undefined;
      socket.onClose = (r) => (
        channel?.fail(`the broker connection closed: ${r}`),
        reject(new RendezvousError(`the broker connection closed: ${r}`))
      );
      socket.onControl = (e) => {
        if (e === "waiting") this.set("waiting");
        if (e === "peer-left" && channel) {
          channel.fail("the paired end left");
          socket.close("peer left");
          resolve();
        }
      };
      if (socket.hasSeen("waiting")) this.set("waiting");
      socket.takeFrames((frame: Bytes) => {
        if (channel)
          return void channel
            .receive(frame)
            .catch((err: Error) => (socket.close("frame failed authentication"), reject(err)));
        const opening = toHex(frame.slice(1, 33));
        void respond({
          prologue: linkPrologue(this.record.id),
          psk,
          staticKey: this.deps.key,
          msg1: frame,
          // The pairing's scope as it is now (the pair page shows controls by it; every request is still authorized here).
          meta: { fingerprint: this.deps.fingerprint, scope: this.record.scope ?? "read" },
          accept: (peerStatic) => {
            if (!equalBytes(peerStatic, peerKey))
              throw new HandshakeError("wrong peer key: the other end is not the one this pairing was made with");
            if (this.seenOpenings.has(opening)) throw new HandshakeError("replayed handshake refused");
          },
        }).then(
          (r) => {
            // The broker connection went away while the handshake was being answered: nothing to open.
            if (socket.closed || this.stopped) return;
            if (this.seenOpenings.size > 1000) this.seenOpenings.clear();
            this.seenOpenings.add(opening);
            channel = new SecureChannel(r.keys, (f) => socket.send(f), this.deps.serve, {
              buffered: () => socket.buffered,
            });
            this.channel = channel;
            socket.send(r.msg2);
            this.set("connected", { attempts: 0 });
          },
          (err: Error) => {
            this.deps.log("pairing handshake refused", { pairing: this.record.id, error: err.message });
            socket.close("handshake refused");
            reject(err);
          },
        );
      });
    });
  }

  private async peerSession(): Promise<void> {
    const link = await connectAsPeer({
      factory: wsFactory,
      rendezvous: this.record.rendezvous,
      channel: this.record.channel,
      prologue: linkPrologue(this.record.id),
      psk: fromB64u(this.record.secret)!,
      staticKey: this.deps.key,
      remoteStatic: fromB64u(this.record.peerKey)!,
      meta: { fingerprint: this.deps.fingerprint },
      joinTimeoutMs: 24 * 3600_000,
      // The socket is ours from here on, so stop() can close it while it waits for the host.
      onJoined: (socket) => {
        this.socket = socket;
        if (this.stopped) socket.close("stopped");
        else this.set("waiting");
      },
    });
    this.socket = link.socket;
    if (this.stopped) return void link.socket.close("stopped");
    this.channel = link.channel;
    this.set("connected", { attempts: 0 });
    await new Promise<void>((resolve) => {
      const prev = link.socket.onClose;
      link.socket.onClose = (r) => (prev(r), resolve());
      link.socket.onControl = (e) => {
        if (e === "peer-left") {
          link.channel.fail("the daemon left the broker channel");
          link.socket.close("peer left");
          resolve();
        }
      };
    });
  }
}
