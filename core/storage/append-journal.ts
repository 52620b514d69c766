import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { fsyncDir } from "./atomic-write.js";
import { openDurableAppend, type DurableAppendFile } from "./durable-append.js";

interface Pending {
  text: string;
  durable?: () => void;
  done: () => void;
  fail: (err: unknown) => void;
}

/**
 * An append-only file kept open, with group commit: lines appended while a write is in flight
 * share the next write (durable when it returns: core/storage/durable-append.ts). An append
 * resolves only once its bytes are durable; the `durable` callbacks of one batch run
 * synchronously in append order before any appender resumes, so a caller that applies a change
 * there keeps memory equal to durable state. A failed write is
 * cut off again, so the next line never continues a torn one.
 */
export class AppendJournal {
  private queue: Pending[] = [];
  private tasks: Array<() => Promise<void>> = [];
  private flushing = false;
  private idle: Array<() => void> = [];
  private closed = false;

  private constructor(private readonly file: DurableAppendFile) {}

  private get handle() {
    return this.file.handle;
  }

  /** True once {@link close} was called: appends are refused from then on. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Opens (creating with `mode`) the file at `path` for appending. A file that did not exist gets
   * its directory created and, once created, its directory entry fsynced.
   */
  static async open(path: string, options: { mode?: number; exists?: boolean } = {}): Promise<AppendJournal> {
    if (!options.exists) await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const file = await openDurableAppend(path, options.mode ?? 0o600);
    if (options.exists) return new AppendJournal(file);
    try {
      await fsyncDir(dirname(path));
    } catch (err) {
      await file.handle.close().catch(() => undefined);
      throw err;
    }
    return new AppendJournal(file);
  }

  /** Appends `text` (whole lines); resolves once durable, after `durable` ran. */
  append(text: string, durable?: () => void): Promise<void> {
    if (this.closed) return Promise.reject(new Error("append journal is closed"));
    return new Promise((done, fail) => {
      this.queue.push({ text, durable, done, fail });
      this.kick();
    });
  }

  /** Runs `fn` while no batch is being written, before the next one (compaction). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      this.tasks.push(() => fn().then(resolve, reject));
      this.kick();
    });
  }

  /** Empties the file durably. Only call from {@link exclusive}. */
  async truncate(): Promise<void> {
    await this.handle.truncate(0);
    await this.handle.datasync();
  }

  /** Writes what is queued, then closes the file; later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.flushing || this.queue.length > 0 || this.tasks.length > 0) {
      await new Promise<void>((resolve) => {
        this.idle.push(resolve);
        this.kick();
      });
    }
    await this.handle.close();
  }

  private kick(): void {
    if (!this.flushing) void this.flush();
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0 || this.tasks.length > 0) {
        if (this.queue.length > 0) await this.writeBatch(this.queue.splice(0));
        for (const task of this.tasks.splice(0)) await task();
      }
    } finally {
      this.flushing = false;
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }

  private async writeBatch(batch: Pending[]): Promise<void> {
    const bytes = Buffer.from(batch.length === 1 ? batch[0]!.text : batch.map((b) => b.text).join(""), "utf8");
    let written = 0;
    try {
      while (written < bytes.length) written += (await this.handle.write(bytes, written)).bytesWritten;
      await this.file.sync();
    } catch (err) {
      // Only this handle appends: the bytes past the file's size before this batch are ours.
      await this.handle
        .stat()
        .then(({ size }) => this.handle.truncate(size - written))
        .catch(() => undefined);
      for (const b of batch) b.fail(err);
      return;
    }
    for (const b of batch) b.durable?.();
    for (const b of batch) b.done();
  }
}
