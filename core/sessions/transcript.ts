import { mkdir, open, type FileHandle } from "node:fs/promises";
import { dirname } from "node:path";

/** One line of `events.jsonl` / `terminal.jsonl`. */
export interface TranscriptLine {
  seq: number;
  at: number;
  type: string;
  data?: unknown;
}

/**
 * An append-only JSONL transcript. Appends are serialized (one write per line, in order) and
 * every written line is announced to live followers.
 */
export class TranscriptWriter {
  private seq: number;
  private handle?: Promise<FileHandle>;
  private chain: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(line: TranscriptLine) => void>();
  private closed = false;

  /** `lastSeq`: the seq of the file's last line, when it goes on (a resumed session). */
  constructor(
    readonly path: string,
    private readonly now: () => number,
    lastSeq = 0,
  ) {
    this.seq = lastSeq;
  }

  append(type: string, data?: unknown): TranscriptLine {
    const line: TranscriptLine = { seq: ++this.seq, at: this.now(), type, ...(data === undefined ? {} : { data }) };
    if (this.closed) return line;
    const text = JSON.stringify(line) + "\n";
    this.chain = this.chain
      .then(async () => {
        const fh = await (this.handle ??= this.openFile());
        await fh.appendFile(text, "utf8");
        for (const l of this.listeners) l(line);
      })
      .catch(() => undefined);
    return line;
  }

  /** Resolves once everything appended so far is written. */
  flushed(): Promise<void> {
    return this.chain;
  }

  /** Live lines as they are written; returns the unsubscribe function. */
  follow(listener: (line: TranscriptLine) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    await this.chain;
    this.closed = true;
    this.listeners.clear();
    const h = this.handle;
    this.handle = undefined;
    // The handle's open may itself have failed (its folder removed): closing is then a no-op.
    if (h) await h.then((fh) => fh.close()).catch(() => undefined);
  }

  private async openFile(): Promise<FileHandle> {
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    return open(this.path, "a", 0o600);
  }
}
