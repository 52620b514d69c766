/**
 * An open encrypted channel: JSON messages sealed with the handshake's keys, one AES-GCM
 * counter per direction. The counter is never sent; each end expects the next one, so an
 * injected, dropped, reordered or replayed frame fails to open and the channel closes for good.
 * Requests and answers are matched by id, so one channel carries many calls.
 *
 * A request may ask for a stream (`GET /events`): the serving end answers `open`, then one `evt`
 * message per event on the same id, then the closing `res`; the caller ends it early with
 * `cancel`. Being channel messages, they share the direction's counter, so a stream's events are
 * authenticated and arrive in order. The serving end holds no queue of its own: when more than
 * `maxStreamBacklog` bytes wait to leave (sealing or the transport's buffer), it ends the stream
 * (`overflow`) and the caller reconnects from its last event id. Closing the channel ends every
 * stream it serves.
 */
import { concat, fromUtf8, utf8, type Bytes } from "./bytes.js";
import { open, seal } from "./primitives.js";
import type { SessionKeys } from "./handshake.js";

export const FRAME = 3;
const AAD = utf8("svc/1 frame");

export class ChannelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ChannelError";
  }
}

export interface RemoteRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

export interface RemoteResponse {
  status: number;
  body: string;
}

/** One server-sent event carried through the channel. */
export interface StreamEvent {
  id?: string;
  event: string;
  data: string;
}

/** What the serving end gets with a stream request: where to put the events, and when to stop. */
export interface StreamSink {
  /** Aborted when the caller cancels, the channel closes, or the stream fell too far behind. */
  readonly signal: AbortSignal;
  /** The stream is established (the caller is told before any event). */
  open(): void;
  event(e: StreamEvent): void;
}

export type Serve = (r: RemoteRequest, stream?: StreamSink) => Promise<RemoteResponse>;

export interface ChannelOptions {
  /** Bytes the transport holds unsent (a WebSocket's `bufferedAmount`). */
  buffered?: () => number;
  /** Streams served at once (default 8); more are answered 503. */
  maxStreams?: number;
  /** Unsent bytes at which a served stream is ended as `overflow` (default 1 MiB). */
  maxStreamBacklog?: number;
}

/** How the caller follows a stream: events as they come, `done` with the closing answer. */
export interface StreamHandle {
  /** Resolves with the closing answer: the refusal (status ≥ 400), or `{"ended": why}` after an open stream. */
  done: Promise<RemoteResponse>;
  cancel(): void;
}

/** Characters of a message's JSON per frame: at most 3 UTF-8 bytes each, under the relay's 256 KiB frame. */
const PART_CHARS = 64 * 1024;
/** A message larger than this (reassembled from its parts) closes the channel. */
const MAX_MESSAGE_CHARS = 32 * 1024 * 1024;

type Message =
  | { t: "part"; d: string }
  | { t: "last"; d: string }
  | ({ t: "req"; id: number; stream?: boolean } & RemoteRequest)
  | ({ t: "res"; id: number } & RemoteResponse)
  | { t: "open"; id: number }
  | { t: "evt"; id: number; e: StreamEvent }
  | { t: "cancel"; id: number };

interface Pending {
  resolve(r: RemoteResponse): void;
  reject(e: Error): void;
  onOpen?: () => void;
  onEvent?: (e: StreamEvent) => void;
}

export class SecureChannel {
  private sendCounter = 0;
  private receiveCounter = 0;
  private nextId = 1;
  private failed?: ChannelError;
  private readonly pending = new Map<number, Pending>();
  /** Streams this end serves, by request id. */
  private readonly streams = new Map<number, Served>();
  /** Plaintext bytes handed to `send` and not yet given to the transport. */
  private queued = 0;
  /** The parts of a large message received so far. */
  private partial = "";
  /** Ciphertext arrives one frame at a time and must be opened in order. */
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();

  constructor(
    private readonly keys: SessionKeys,
    private readonly transmit: (frame: Bytes) => void,
    /** Serves a peer's request (the daemon side); absent = requests are refused. */
    private readonly serve?: Serve,
    private readonly options: ChannelOptions = {},
  ) {}

  get closedReason(): string | undefined {
    return this.failed?.message;
  }

  request(r: RemoteRequest, timeoutMs = 60_000): Promise<RemoteResponse> {
    if (this.failed) return Promise.reject(this.failed);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new ChannelError(`no answer through the encrypted channel within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.send({ t: "req", id, ...r });
    });
  }

  /**
   * Asks for a stream: `onEvent` gets each event in order until the serving end closes it, the
   * channel closes (`done` rejects) or `cancel()`. `timeoutMs` bounds the wait for it to open.
   */
  stream(
    r: RemoteRequest,
    handlers: { onOpen?: () => void; onEvent: (e: StreamEvent) => void },
    timeoutMs = 60_000,
  ): StreamHandle {
    if (this.failed) return { done: Promise.reject(this.failed), cancel: () => undefined };
    const id = this.nextId++;
    let cancel = () => undefined as void;
    const done = new Promise<RemoteResponse>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.send({ t: "cancel", id });
        reject(new ChannelError(`the stream did not open through the encrypted channel within ${timeoutMs} ms`));
      }, timeoutMs);
      const settle = () => clearTimeout(timer);
      this.pending.set(id, {
        resolve: (v) => (settle(), resolve(v)),
        reject: (e) => (settle(), reject(e)),
        onOpen: () => (settle(), handlers.onOpen?.()),
        onEvent: handlers.onEvent,
      });
      cancel = () => {
        if (!this.pending.delete(id)) return;
        settle();
        if (!this.failed) this.send({ t: "cancel", id });
        resolve({ status: 200, body: JSON.stringify({ ended: "cancelled" }) });
      };
      this.send({ t: "req", id, stream: true, ...r });
    });
    return { done, cancel: () => cancel() };
  }

  /** Feeds one frame from the transport; a frame that does not open closes the channel. */
  receive(frame: Bytes): Promise<void> {
    this.inbound = this.inbound.then(() => this.open(frame));
    return this.inbound;
  }

  /** Closes the channel: every waiting call fails with `reason`, every served stream ends. */
  fail(reason: string): void {
    if (this.failed) return;
    this.failed = new ChannelError(reason);
    for (const p of this.pending.values()) p.reject(this.failed);
    this.pending.clear();
    for (const s of this.streams.values()) s.abort.abort("the link closed");
    this.streams.clear();
  }

  /** A large message leaves as consecutive `part`s and a `last` (their counters are consecutive too). */
  private send(m: Message): void {
    const text = JSON.stringify(m);
    if (text.length <= PART_CHARS) return this.sendText(text);
    for (let at = 0; at < text.length; at += PART_CHARS) {
      const d = text.slice(at, at + PART_CHARS);
      this.sendText(JSON.stringify({ t: at + PART_CHARS >= text.length ? "last" : "part", d }));
    }
  }

  private sendText(text: string): void {
    const counter = this.sendCounter++;
    const plain = utf8(text);
    this.queued += plain.length;
    this.outbound = this.outbound.then(async () => {
      const ct = await seal(this.keys.send, counter, AAD, plain);
      this.queued -= plain.length;
      if (!this.failed) this.transmit(concat(Uint8Array.of(FRAME), ct));
    });
  }

  private async open(frame: Bytes): Promise<void> {
    if (this.failed) return;
    const plain =
      frame[0] === FRAME ? await open(this.keys.receive, this.receiveCounter, AAD, frame.slice(1)) : undefined;
    if (!plain) {
      this.fail(
        "a frame failed authentication (injected, reordered, replayed or altered in transit): the encrypted channel is closed",
      );
      throw this.failed;
    }
    this.receiveCounter++;
    let m: Message;
    try {
      m = JSON.parse(fromUtf8(plain)) as Message;
      if (m.t === "part" || m.t === "last") {
        this.partial += m.d;
        if (this.partial.length > MAX_MESSAGE_CHARS) throw new Error("too large");
        if (m.t === "part") return;
        m = JSON.parse(this.partial) as Message;
        this.partial = "";
      }
    } catch {
      this.fail("the peer sent a malformed or oversized message: the encrypted channel is closed");
      throw this.failed;
    }
    if (m.t === "res") {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.resolve({ status: m.status, body: m.body });
    } else if (m.t === "open") this.pending.get(m.id)?.onOpen?.();
    else if (m.t === "evt") this.pending.get(m.id)?.onEvent?.(m.e);
    else if (m.t === "cancel") this.streams.get(m.id)?.abort.abort("cancelled");
    else if (m.t === "req") this.answer(m);
  }

  /** Serves a request concurrently: the next frame is opened while this one runs. */
  private answer(m: { id: number; stream?: boolean } & RemoteRequest): void {
    const { id } = m;
    const request: RemoteRequest = {
      method: m.method,
      path: m.path,
      ...(m.headers ? { headers: m.headers } : {}),
      ...(m.body !== undefined ? { body: m.body } : {}),
    };
    let stream: Served | undefined;
    if (m.stream && this.serve) {
      const max = this.options.maxStreams ?? 8;
      if (this.streams.size >= max)
        return this.send({
          t: "res",
          id,
          ...errorAnswer(
            503,
            "unavailable",
            `this link already carries ${max} streams: end one before opening another`,
          ),
        });
      stream = { abort: new AbortController(), opened: false };
      this.streams.set(id, stream);
    }
    const work = this.serve
      ? this.serve(request, stream && this.sink(id, stream)).catch((e: Error) =>
          errorAnswer(500, "internal", e.message),
        )
      : Promise.resolve(errorAnswer(403, "forbidden", "this end serves no requests"));
    void work.then((answer) => {
      if (stream) this.streams.delete(id);
      const why = stream?.abort.signal.aborted ? String(stream.abort.signal.reason) : undefined;
      if (why === "cancelled" || this.failed) return;
      // An opened stream closes with why it ended; a refused one with the daemon's answer.
      const body = stream?.opened ? JSON.stringify({ ended: why ?? "the daemon ended the stream" }) : answer.body;
      this.send({ t: "res", id, status: answer.status, body });
    });
  }

  private sink(id: number, s: Served): StreamSink {
    const max = this.options.maxStreamBacklog ?? 1024 * 1024;
    return {
      signal: s.abort.signal,
      open: () => {
        if (s.opened || s.abort.signal.aborted) return;
        s.opened = true;
        this.send({ t: "open", id });
      },
      event: (e) => {
        if (s.abort.signal.aborted || this.failed) return;
        const backlog = this.queued + (this.options.buffered?.() ?? 0);
        if (backlog > max)
          return void s.abort.abort(
            `overflow: ${backlog} bytes waited to leave (the limit is ${max}); resume from the last event id`,
          );
        this.send({ t: "evt", id, e });
      },
    };
  }
}

interface Served {
  abort: AbortController;
  opened: boolean;
}

function errorAnswer(status: number, code: string, message: string): RemoteResponse {
  return { status, body: JSON.stringify({ error: { code, message } }) };
}
