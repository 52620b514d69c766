import { open as openFile, rename, truncate } from "node:fs/promises";
import { dirname } from "node:path";
import { fsyncDir, openDurableAppend, type DurableAppendFile } from "../../../core/plugin-api/index.js";
import type { JournalRecord, NewRecord } from "./row.js";

/** Bytes of journal text written by one group commit at most (bodies ride inline in `add` records). */
const MAX_BATCH_CHARS = 8 * 1024 * 1024;

/**
 * The outbox's append-only state journal (one JSON line per record) with group commit: records
 * appended while a write is in flight share the next durable write (`O_DSYNC`). After a batch is durable,
 * `apply` runs for each record in order, synchronously, before the appenders resume; so memory
 * only ever holds durable state, and {@link between} (compaction) sees a consistent state.
 */
export class Journal {
  private queue: Array<{ records: JournalRecord[]; text?: string; done: (results: boolean[]) => void; fail: (err: unknown) => void }> = [];
  private tasks: Array<() => Promise<void>> = [];
  private flushing = false;
  /** Bytes known to be whole records. */
  private size = 0;
  private idle: Array<() => void> = [];

  private constructor(
    private readonly path: string,
    private file: DurableAppendFile,
    private seq: number,
    private readonly apply: (record: JournalRecord) => boolean,
    private readonly between: () => Promise<void>,
  ) {}

  /**
   * Opens the journal at `path` for appending after `seq`. Bytes after the last newline (a line a
   * kill -9 cut short, which replay dropped) are cut off first, so the next record starts a line
   * of its own instead of continuing the torn one.
   */
  static async open(
    path: string,
    seq: number,
    hooks: {
      apply: (record: JournalRecord) => boolean;
      between: () => Promise<void>;
    },
  ): Promise<Journal> {
    const whole = await wholeLinesEnd(path);
    if (whole !== undefined && whole.end < whole.size) await truncate(path, whole.end);
    const file = await openDurableAppend(path);
    const journal = new Journal(path, file, seq, hooks.apply, hooks.between);
    try {
      if (whole !== undefined && whole.end < whole.size) await file.handle.datasync();
      journal.size = (await file.handle.stat()).size;
    } catch (err) {
      await file.handle.close().catch(() => undefined);
      throw err;
    }
    return journal;
  }

  /**
   * Appends records durably; resolves with `apply`'s result for each (false: it changed nothing).
   * `stamped` sees each record as it will be applied (to attach in-memory companions).
   */
  append(records: NewRecord[], stamped?: (record: JournalRecord) => void): Promise<boolean[]> {
    const recs = records.map((r) => ({ ...r, seq: ++this.seq }) as JournalRecord);
    if (stamped) recs.forEach(stamped);
    return new Promise((done, fail) => {
      this.queue.push({ records: recs, done, fail });
      if (!this.flushing) void this.flush();
    });
  }

  /**
   * Runs `fn` while no batch is being written (for compaction from outside the write loop).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      this.tasks.push(() => fn().then(resolve, reject));
      if (!this.flushing) void this.flush();
    });
  }

  /**
   * Moves the file aside to `retiredPath` and continues in a fresh, empty file at the same path
   * (one directory fsync makes both durable before any record goes to the new file). Only call
   * from `between` or `exclusive`. If it fails, appends keep going to the current file.
   */
  async rotate(retiredPath: string): Promise<void> {
    await rename(this.path, retiredPath);
    let fresh: DurableAppendFile | undefined;
    try {
      fresh = await openDurableAppend(this.path);
      await fsyncDir(dirname(this.path));
    } catch (err) {
      await fresh?.handle.close().catch(() => undefined);
      await rename(retiredPath, this.path).catch(() => undefined);
      throw err;
    }
    const old = this.file;
    this.file = fresh;
    this.size = 0;
    await old.handle.close().catch(() => undefined);
  }

  /** Resolves once nothing is queued or being written. */
  drained(): Promise<void> {
    if (!this.flushing && this.queue.length === 0 && this.tasks.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async close(): Promise<void> {
    await this.drained();
    await this.file.handle.close();
  }

  /** Queued appends for one write, up to {@link MAX_BATCH_CHARS} (at least one). */
  private takeBatch(): Journal["queue"] {
    let chars = 0;
    let n = 0;
    while (n < this.queue.length && (n === 0 || chars < MAX_BATCH_CHARS)) {
      const entry = this.queue[n]!;
      entry.text ??= entry.records.map((r) => JSON.stringify(r) + "\n").join("");
      chars += entry.text.length;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async writeBatch(batch: Journal["queue"]): Promise<void> {
    const text = Buffer.from(batch.map((b) => b.text).join(""), "utf8");
    try {
      let written = 0;
      while (written < text.length) written += (await this.file.handle.write(text, written)).bytesWritten;
      await this.file.sync();
      this.size += text.length;
    } catch (err) {
      // Cut a partial write off, so the next record never continues a torn line.
      await this.file.handle.truncate(this.size).catch(() => undefined);
      for (const b of batch) b.fail(err);
      return;
    }
    for (const b of batch) b.done(b.records.map((r) => this.apply(r)));
    await this.between().catch(() => undefined);
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0 || this.tasks.length > 0) {
        if (this.queue.length > 0) await this.writeBatch(this.takeBatch());
        for (const task of this.tasks.splice(0)) await task();
      }
    } finally {
      this.flushing = false;
      for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}

/** Bytes read per step while looking backwards for the last newline. */
const TAIL_CHUNK = 64 * 1024;

/**
 * The file's size and the end of its last whole line (0 when it has none); undefined when the
 * file does not exist. Reads backwards from the end, only as far as the last newline.
 */
async function wholeLinesEnd(path: string): Promise<{ size: number; end: number } | undefined> {
  const handle = await openFile(path, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    const buf = Buffer.alloc(Math.min(TAIL_CHUNK, size));
    for (let to = size; to > 0; ) {
      const from = Math.max(0, to - buf.length);
      const { bytesRead } = await handle.read(buf, 0, to - from, from);
      const nl = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
      if (nl >= 0) return { size, end: from + nl + 1 };
      to = from;
    }
    return { size, end: 0 };
  } finally {
    await handle.close();
  }
}

/**
 * Parses journal text. A last line without its newline (a kill -9 mid-append, never
 * acknowledged) is dropped, never applied, and reported as `torn`; an unparsable line elsewhere
 * is skipped and counted.
 */
export function parseJournal(text: string): { records: JournalRecord[]; skipped: number; torn: boolean } {
  const lines = text.split("\n");
  const torn = (lines.pop() ?? "") !== "";
  const records: JournalRecord[] = [];
  let skipped = 0;
  for (const line of lines) {
    if (line.trim() === "") continue;
    const rec = parseRecord(line);
    if (rec) records.push(rec);
    else skipped++;
  }
  return { records, skipped, torn };
}

function parseRecord(line: string): JournalRecord | undefined {
  try {
    const rec = JSON.parse(line) as JournalRecord;
    return rec && typeof rec === "object" && typeof rec.seq === "number" && typeof rec.op === "string" ? rec : undefined;
  } catch {
    return undefined;
  }
}
