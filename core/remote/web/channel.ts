/**
 * An open encrypted channel: JSON messages sealed with the handshake's keys, one AES-GCM
 * counter per direction. The counter is never sent; each end expects the next one, so an
 * injected, dropped, reordered or replayed frame fails to open and the channel closes for good.
 * Requests and answers are matched by id, so one channel carries many calls.
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

type Message = ({ t: "req"; id: number } & RemoteRequest) | ({ t: "res"; id: number } & RemoteResponse);

export class SecureChannel {
  private sendCounter = 0;
  private receiveCounter = 0;
  private nextId = 1;
  private failed?: ChannelError;
  private readonly pending = new Map<number, { resolve(r: RemoteResponse): void; reject(e: Error): void }>();
  /** Ciphertext arrives one frame at a time and must be opened in order. */
  private inbound: Promise<void> = Promise.resolve();
  private outbound: Promise<void> = Promise.resolve();

  constructor(
    private readonly keys: SessionKeys,
    private readonly transmit: (frame: Bytes) => void,
    /** Serves a peer's request (the daemon side); absent = requests are refused. */
    private readonly serve?: (r: RemoteRequest) => Promise<RemoteResponse>,
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

  /** Feeds one frame from the transport; a frame that does not open closes the channel. */
  receive(frame: Bytes): Promise<void> {
    this.inbound = this.inbound.then(() => this.open(frame));
    return this.inbound;
  }

  /** Closes the channel: every waiting call fails with `reason`. */
  fail(reason: string): void {
    if (this.failed) return;
    this.failed = new ChannelError(reason);
    for (const p of this.pending.values()) p.reject(this.failed);
    this.pending.clear();
  }

  private send(m: Message): void {
    const counter = this.sendCounter++;
    this.outbound = this.outbound.then(async () => {
      const ct = await seal(this.keys.send, counter, AAD, utf8(JSON.stringify(m)));
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
    } catch {
      this.fail("the peer sent a malformed message: the encrypted channel is closed");
      throw this.failed;
    }
    if (m.t === "res") {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      p?.resolve({ status: m.status, body: m.body });
    } else if (m.t === "req") {
      // Served concurrently: the next frame is opened while this request runs.
      const id = m.id;
      const work = this.serve
        ? this.serve(m).catch((e: Error) => ({
            status: 500,
            body: JSON.stringify({ error: { code: "internal", message: e.message } }),
          }))
        : Promise.resolve({
            status: 403,
            body: JSON.stringify({ error: { code: "forbidden", message: "this end serves no requests" } }),
          });
      void work.then((answer) => this.send({ t: "res", id, status: answer.status, body: answer.body }));
    }
  }
}
