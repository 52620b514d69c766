/**
 * When `svc run-swarm` should read its run's record again: at each `/events` event about the run
 * (`swarm:step`, `swarm:run-ended`), so the CLI reads the record when it changed instead of
 * polling it. Without the stream (`--remote`, or it could not be opened or broke off) it falls
 * back to reading every 200 ms; with it, it also reads after `idleMs` without news, in case an
 * event was lost.
 */
import type { DaemonClient } from "../daemon-client.js";

const POLL_MS = 200;
const IDLE_MS = 5_000;

export class RunWatch {
  private pending = false;
  private wake: (() => void) | undefined;
  private streaming = false;
  private readonly abort = new AbortController();

  private constructor(private readonly runId: string) {}

  /** Opens the daemon's event stream and resolves once it is connected (or known not to be). */
  static async open(client: DaemonClient, runId: string): Promise<RunWatch> {
    const w = new RunWatch(runId);
    const res = await client.openStream("/events", w.abort.signal).catch(() => undefined);
    if (res?.body) {
      w.streaming = true;
      void w.read(res.body).finally(() => {
        w.streaming = false;
        w.notify();
      });
    }
    return w;
  }

  /** Whether changes arrive through `/events` (else it polls). */
  get following(): boolean {
    return this.streaming;
  }

  /** Resolves at the next event about the run (or one that came since the last call), else after the poll or idle delay. */
  async next(idleMs = IDLE_MS): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.streaming ? idleMs : POLL_MS);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wake = undefined;
        self.pending = false;
        resolve();
      }
      this.wake = done;
    });
  }

  close(): void {
    this.abort.abort();
  }

  private notify(): void {
    this.pending = true;
    this.wake?.();
  }

  /** Reads server-sent events; each `data:` line naming this run wakes the waiter. */
  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of body) {
        buf += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl).replace(/\r$/, "");
          buf = buf.slice(nl + 1);
          if (line.startsWith("data:") && this.about(line.slice(5))) this.notify();
        }
      }
    } catch {
      // Aborted by close(), or the daemon went away: polling takes over.
    }
  }

  private about(data: string): boolean {
    try {
      const e = JSON.parse(data) as { type?: string; data?: { runId?: string } };
      return e.type?.startsWith("swarm:") === true && e.data?.runId === this.runId;
    } catch {
      return false;
    }
  }
}
