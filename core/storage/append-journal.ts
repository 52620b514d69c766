import { mkdir, rename, truncate } from "node:fs/promises";
import { dirname } from "node:path";
import { fsyncDir } from "./atomic-write.js";
import { namingFile, writingFile } from "./file-errors.js";
import { openDurableAppend, type DurableAppendFile } from "./durable-append.js";
import {
  countLines,
  forgetJournalLength,
  startRecording,
  type JournalCheck,
  type JournalLength,
  type LengthRecorder,
} from "./journal-length.js";
import { lengthAtOpen } from "./journal-loss.js";
import { linesBackwards } from "./read-backwards.js";

export interface AppendJournalOptions {
  /** Mode of a file this creates (default 0600). */
  mode?: number;
  /** The file is known to exist: no directory is created or fsynced at open. */
  exists?: boolean;
  /**
   * Cut bytes after the last newline (a line a kill -9 cut short) off at open, so the next line
   * starts a line of its own instead of continuing the torn one. A file found to exist this way
   * counts as `exists`.
   */
  cutTornTail?: boolean;
  /**
   * Text (in chars) after which a write takes no further append: the append that reaches it is the
   * batch's last, so a batch may pass it by that one append; it always takes at least one. Default: all queued.
   */
  maxBatchChars?: number;
  /**
   * Runs after each durable batch, once its callbacks ran and before any appender resumes
   * (its synchronous part) and before the next batch is written (compaction). Its errors are
   * ignored.
   */
  afterBatch?: () => void | Promise<void>;
  /**
   * The longest a {@link AppendJournal.append | lazy} append waits for a write to share (default
   * 20 ms); once it passes, the lazy appends are written on their own.
   */
  lazyMs?: number;
}

/** Whole lines, as text or as their UTF-8 bytes. */
export type JournalLines = string | Buffer;

interface Pending {
  /** The entry's whole lines, or how to render them (called once, when its batch is formed). */
  text: JournalLines | (() => JournalLines);
  durable?: () => unknown;
  done: (result: unknown) => void;
  fail: (err: unknown) => void;
  /** Answers no caller: may wait (at most `lazyMs`) for a write another append starts. */
  lazy: boolean;
  /** The sequence number of the entry's last line, when the owner numbers its records. */
  seq?: number;
}

/** Bytes or chars of rendered lines (a batch's bound is counted in either). */
const sizeOf = (lines: JournalLines): number => lines.length;

/**
 * An append-only file kept open, with group commit: lines appended while a write is in flight
 * share the next write (durable when it returns: core/storage/durable-append.ts). An append
 * resolves only once its bytes are durable; the `durable` callbacks of one batch run
 * synchronously in append order before any appender resumes, so a caller that applies a change
 * there keeps memory equal to durable state. A failed write is cut off again (back to the size
 * known to hold whole lines), so the next line never continues a torn one; if that cut fails, it
 * is retried before the next write, which fails rather than continue a torn line (and before a
 * rotation, which fails too, and at close).
 *
 * The journal knows its length (core/storage/journal-length.ts): after each batch's data is
 * durable, and before any of its appenders resumes, `<file>.length` records the lines and bytes
 * acknowledged (and the last sequence number given), so a start that finds fewer tells the loss.
 * A batch whose record cannot be written fails like one whose data could not be (its lines cut off).
 */
export class AppendJournal {
  private queue: Pending[] = [];
  private tasks: Array<() => Promise<void>> = [];
  private flushing = false;
  private idle: Array<() => void> = [];
  private closed = false;
  /** Bytes known to be whole lines (the file's size unless a cut after a failed write failed too). */
  private size: number;
  /** A failed write's bytes may still be past {@link size}. */
  private torn = false;
  /** Appends queued that are not lazy: a write is due now. */
  private urgent = 0;
  /** Writes the lazy appends queued once `lazyMs` passed (armed while only lazy ones wait). */
  private lazyTimer: NodeJS.Timeout | undefined;
  /** The length record, and what it counts: whole lines in {@link size}, and their last sequence number. */
  private recorder: LengthRecorder | undefined;
  private length: JournalLength;

  private constructor(
    private readonly path: string,
    private file: DurableAppendFile,
    size: number,
    private readonly options: AppendJournalOptions,
    length: JournalLength,
    /** What opening found in the file against its length record. */
    readonly found: JournalCheck | undefined,
  ) {
    this.size = size;
    this.length = length;
  }

  /** True while something is queued or being written. */
  get busy(): boolean {
    return this.flushing || this.queue.length > 0 || this.tasks.length > 0;
  }

  /** True once {@link close} was called: appends are refused from then on. */
  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Opens (creating with `mode`) the file at `path` for appending. A file that did not exist gets
   * its directory created and, once created, its directory entry fsynced.
   */
  static async open(path: string, options: AppendJournalOptions = {}): Promise<AppendJournal> {
    let exists = options.exists === true;
    let cut = false;
    // What the file holds against its length record: read whole only when the two differ.
    const counted = await lengthAtOpen(path);
    if (options.cutTornTail && counted.size !== undefined) {
      const whole = counted.check ?? (await wholeLinesEnd(path));
      if (whole !== undefined) {
        exists = true;
        const end = "wholeEnd" in whole ? whole.wholeEnd : whole.end;
        cut = end < whole.size;
        if (cut) await truncate(path, end);
      }
    }
    if (!exists) await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    const file = await openDurableAppend(path, options.mode ?? 0o600);
    let recorder: LengthRecorder | undefined;
    try {
      if (cut) await file.handle.datasync();
      if (!exists) await fsyncDir(dirname(path));
      const st = await file.handle.stat();
      const length: JournalLength = {
        lines: counted.lines,
        bytes: st.size,
        ...(counted.seq !== undefined ? { seq: counted.seq } : {}),
      };
      if (counted.kept !== false)
        recorder = await startRecording(path, options.mode, counted.g, length, counted.record);
      const journal = new AppendJournal(path, file, st.size, options, length, counted.check);
      journal.recorder = recorder;
      return journal;
    } catch (err) {
      await recorder?.close().catch(() => undefined);
      await file.handle.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * Appends `text` (whole lines, as text or UTF-8 bytes; a function renders them when the batch is
   * formed); resolves once durable, with what `durable` returned (it runs first, see the class
   * comment). If the function or `durable` throws, this append alone rejects with that error (a
   * throw in `durable` comes after the line is durable).
   *
   * A `lazy` append is one no caller waits on (a state change that answers nobody): it starts no
   * write of its own but rides with the next one (another append's, or its own once `lazyMs`
   * passed, or at {@link drained}/{@link close}). It is durable when it resolves, like any other.
   */
  append<R = void>(
    text: JournalLines | (() => JournalLines),
    durable?: () => R,
    options?: { lazy?: boolean; seq?: number },
  ): Promise<R> {
    if (this.closed) return Promise.reject(new Error(`append journal ${this.path} is closed`));
    const lazy = options?.lazy === true;
    const seq = options?.seq;
    return new Promise<R>((done, fail) => {
      this.queue.push({ text, durable, done: done as (result: unknown) => void, fail, lazy, seq });
      if (!lazy) this.urgent++;
      this.kick();
    });
  }

  /** Runs `fn` while no batch is being written, before the next one (compaction). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise((resolve, reject) => {
      // A sync throw from `fn` rejects this call only; it never escapes the write loop.
      this.tasks.push(async () => {
        try {
          resolve(await fn());
        } catch (err) {
          reject(err);
        }
      });
      this.kick();
    });
  }

  /**
   * Empties the file durably, leaving only `firstLine` (whole lines) when given, whose last line
   * holds sequence number `seq` when given. Only call from {@link exclusive} or `afterBatch`.
   * The length record counts nothing while the file is cut, so a crash in between is never a loss.
   */
  async truncate(firstLine?: string, seq?: number): Promise<void> {
    // On disk before the cut: a power loss must not leave a record counting the lines cut away.
    await this.record({ lines: 0, bytes: 0 }, true);
    await this.file.handle.truncate(0);
    this.size = 0;
    this.torn = false;
    if (firstLine) {
      const bytes = Buffer.from(firstLine, "utf8");
      let written = 0;
      try {
        while (written < bytes.length) written += (await this.file.handle.write(bytes, written)).bytesWritten;
      } catch (err) {
        this.torn = true;
        throw namingFile(this.path, err);
      }
      this.size = bytes.length;
    }
    await this.file.handle.datasync();
    const lines = firstLine ? countLines(Buffer.from(firstLine, "utf8")) : 0;
    await this.record({ lines, bytes: this.size, ...(seq !== undefined ? { seq } : {}) });
  }

  /**
   * Moves the file aside to `retiredPath` and continues in a fresh, empty file at the same path
   * (one directory fsync makes both durable before any line goes to the new file). Only call
   * from {@link exclusive} or `afterBatch`. If it fails, appends keep going to the current file.
   */
  async rotate(retiredPath: string): Promise<void> {
    // A failed write's bytes must not leave with the file: no later write would cut them off.
    if (this.torn) await this.cut();
    // The record goes first (a crash then leaves a journal without one, never one held to another file's count).
    await this.stopRecording();
    await rename(this.path, retiredPath).catch(async (err) => {
      this.recorder = await startRecording(this.path, this.options.mode, 0, this.length);
      throw err;
    });
    let fresh: DurableAppendFile | undefined;
    try {
      fresh = await openDurableAppend(this.path, this.options.mode ?? 0o600);
      await fsyncDir(dirname(this.path));
    } catch (err) {
      await fresh?.handle.close().catch(() => undefined);
      await rename(retiredPath, this.path).catch(() => undefined);
      this.recorder = await startRecording(this.path, this.options.mode, 0, this.length);
      throw namingFile(this.path, err);
    }
    const old = this.file;
    this.file = fresh;
    this.size = 0;
    this.torn = false;
    await old.handle.close().catch(() => undefined);
    this.length = { lines: 0, bytes: 0 };
    this.recorder = await startRecording(this.path, this.options.mode, 0, this.length);
  }

  /** Resolves once nothing is queued or being written (lazy appends are written now). */
  drained(): Promise<void> {
    if (!this.flushing && this.queue.length === 0 && this.tasks.length === 0) return Promise.resolve();
    const idle = new Promise<void>((resolve) => this.idle.push(resolve));
    if (!this.flushing) void this.flush();
    return idle;
  }

  /** Writes what is queued, then closes the file; later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    await this.drained();
    // Last chance to cut a failed write's bytes off (no next write will); a failure leaves them to a restart.
    if (this.torn) await this.cut().catch(() => undefined);
    await this.recorder?.close().catch(() => undefined);
    await this.file.handle.close();
  }

  /** Starts writing when something is due; only lazy appends queued: writes them once `lazyMs` passed. */
  private kick(): void {
    if (this.flushing) return;
    if (this.due()) {
      void this.flush();
      return;
    }
    this.lazyTimer ??= setTimeout(() => {
      this.lazyTimer = undefined;
      if (!this.flushing && this.queue.length > 0) void this.flush();
    }, this.options.lazyMs ?? 20);
  }

  /** A write is due: an append that is not lazy, a task, or closing (which writes everything). */
  private due(): boolean {
    return this.urgent > 0 || this.tasks.length > 0 || this.closed || this.idle.length > 0;
  }

  /** Writes batches while one is due; the first batch also takes lazy appends only (a timer or drain asked for it). */
  private async flush(): Promise<void> {
    this.flushing = true;
    clearTimeout(this.lazyTimer);
    this.lazyTimer = undefined;
    try {
      let first = true;
      while (this.tasks.length > 0 || (this.queue.length > 0 && (first || this.due()))) {
        first = false;
        const batch = this.takeBatch();
        if (batch.length > 0) await this.writeBatch(batch);
        for (const task of this.tasks.splice(0)) await task();
      }
    } finally {
      this.flushing = false;
      if (this.queue.length === 0) for (const resolve of this.idle.splice(0)) resolve();
      else this.kick();
    }
  }

  /** Queued appends for one write, until their text reaches `maxBatchChars` (at least one), their text rendered. */
  private takeBatch(): Array<Pending & { text: JournalLines }> {
    const max = this.options.maxBatchChars ?? Infinity;
    let chars = 0;
    let n = 0;
    while (n < this.queue.length && (n === 0 || chars < max)) {
      const entry = this.queue[n]!;
      if (typeof entry.text === "function") {
        try {
          entry.text = entry.text();
        } catch (err) {
          // That append fails alone; the others are written.
          this.queue.splice(n, 1);
          if (!entry.lazy) this.urgent--;
          entry.fail(err);
          continue;
        }
      }
      chars += sizeOf(entry.text);
      n++;
    }
    const batch = this.queue.splice(0, n) as Array<Pending & { text: JournalLines }>;
    for (const b of batch) if (!b.lazy) this.urgent--;
    return batch;
  }

  private async writeBatch(batch: Array<Pending & { text: JournalLines }>): Promise<void> {
    const bytes = batchBytes(batch);
    const handle = this.file.handle;
    try {
      if (this.torn) await this.cut();
      let written = 0;
      while (written < bytes.length) written += (await handle.write(bytes, written)).bytesWritten;
      await this.file.sync();
      // Acknowledged only once the length record counts the batch (a failure cuts the lines off again).
      let seq = this.length.seq;
      for (const b of batch) if (b.seq !== undefined) seq = b.seq;
      await this.record({
        lines: this.length.lines + countLines(bytes),
        bytes: this.size + bytes.length,
        ...(seq !== undefined ? { seq } : {}),
      });
      this.size += bytes.length;
    } catch (err) {
      // Only this handle appends: the bytes past the known size are this batch's (or a torn one's).
      this.torn = true;
      await this.cut().catch(() => undefined);
      // A record write that failed may still have put this batch's count on disk: count it back.
      await this.recorder?.write(this.length).catch(() => undefined);
      namingFile(this.path, err);
      for (const b of batch) b.fail(err);
      return;
    }
    for (const b of batch) {
      let result: unknown;
      try {
        result = b.durable?.();
      } catch (err) {
        // Its line is durable, but its caller learns that applying it failed; the others go on.
        b.fail(err);
        continue;
      }
      b.done(result);
    }
    const after = this.options.afterBatch;
    if (after) {
      try {
        await after();
      } catch {
        // The hook's own business (it logs what it needs); the batch is durable either way.
      }
    }
  }

  /** Cuts the file back to the bytes known to be whole lines. */
  private async cut(): Promise<void> {
    await this.file.handle.truncate(this.size);
    this.torn = false;
  }

  /** Records `length` as acknowledged (when the journal has a record: see {@link startRecording}). */
  private async record(length: JournalLength, durable = false): Promise<void> {
    if (this.recorder) await writingFile(`${this.path}.length`, () => this.recorder!.write(length, { durable }));
    this.length = length;
  }

  /** Closes and removes the length record (before the file is moved away). */
  private async stopRecording(): Promise<void> {
    await this.recorder?.close().catch(() => undefined);
    this.recorder = undefined;
    await forgetJournalLength(this.path);
  }
}

/** A batch's lines as one buffer (one copy of byte entries; text is encoded straight into it). */
function batchBytes(batch: ReadonlyArray<{ text: JournalLines }>): Buffer {
  if (batch.length === 1) {
    const only = batch[0]!.text;
    return typeof only === "string" ? Buffer.from(only, "utf8") : only;
  }
  let total = 0;
  for (const b of batch) total += typeof b.text === "string" ? Buffer.byteLength(b.text, "utf8") : b.text.length;
  const bytes = Buffer.allocUnsafe(total);
  let at = 0;
  for (const b of batch) at += typeof b.text === "string" ? bytes.write(b.text, at, "utf8") : b.text.copy(bytes, at);
  return bytes;
}

/**
 * The file's size and the end of its last whole line (0 when it has none); undefined when the
 * file does not exist. Reads backwards from the end, only as far as the last newline.
 */
async function wholeLinesEnd(path: string): Promise<{ size: number; end: number } | undefined> {
  // The first line read backwards is what follows the last newline (empty when nothing does).
  for await (const tail of linesBackwards(path)) return { size: tail.start + tail.bytes.length, end: tail.start };
  return undefined;
}
