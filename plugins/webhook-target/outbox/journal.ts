import { AppendJournal, checkedLinesBytes, readCheckedLines } from "../../../core/plugin-api/index.js";
import type { JournalRecord, NewRecord, OutboxRow } from "./row.js";

/**
 * Journal text (chars) after which a group commit takes no further records (bodies ride inline in
 * `add` records); the append that reaches it still goes in, so a write may pass it by one append.
 */
const MAX_BATCH_CHARS = 8 * 1024 * 1024;

/**
 * The outbox's append-only state journal (one JSON line per record) on the host's group-commit
 * journal (`AppendJournal`): records appended while a write is in flight share the next durable
 * write (`O_DSYNC`), until they reach {@link MAX_BATCH_CHARS}. After a batch is durable, `apply`
 * runs for each record in order, synchronously, before the appenders resume; so memory only ever
 * holds durable state, and `between` (compaction) sees a consistent state.
 */
export class Journal {
  private constructor(
    private readonly file: AppendJournal,
    private seq: number,
    private readonly apply: (record: JournalRecord) => boolean,
  ) {}

  /**
   * Opens the journal at `path` for appending after `seq`. Bytes after the last newline (a line a
   * kill -9 cut short, which replay dropped) are cut off first, so the next record starts a line
   * of its own instead of continuing the torn one. `between` runs after each durable batch,
   * before the appenders resume and the next batch is written; its errors are ignored.
   */
  static async open(
    path: string,
    seq: number,
    hooks: {
      apply: (record: JournalRecord) => boolean;
      between: () => Promise<void>;
    },
  ): Promise<Journal> {
    const file = await AppendJournal.open(path, {
      cutTornTail: true,
      maxBatchChars: MAX_BATCH_CHARS,
      afterBatch: hooks.between,
    });
    return new Journal(file, seq, hooks.apply);
  }

  /**
   * Appends records durably; resolves with `apply`'s result for each (false: it changed nothing).
   * The records are stamped with their sequence numbers in place (they are the journal's from now
   * on). `stamped` sees each record as it will be applied (to attach in-memory companions). A
   * `lazy` append answers no caller: it rides with the next write (see `AppendJournal.append`).
   */
  append(
    records: NewRecord[],
    stamped?: (record: JournalRecord) => void,
    options?: { lazy?: boolean },
  ): Promise<boolean[]> {
    const recs = records as JournalRecord[];
    for (const r of recs) r.seq = ++this.seq;
    if (stamped) recs.forEach(stamped);
    return this.file.append(
      () => checkedLinesBytes(recs.map((r) => JSON.stringify(r))),
      () => recs.map((r) => this.apply(r)),
      { ...options, seq: this.seq },
    );
  }

  /** Resolves once nothing is queued or being written, the hook run after the last batch included. */
  drained(): Promise<void> {
    return this.file.drained();
  }

  /**
   * Runs `fn` while no batch is being written (for compaction from outside the write loop).
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.file.exclusive(fn);
  }

  /**
   * Moves the file aside to `retiredPath` and continues in a fresh, empty file at the same path
   * (one directory fsync makes both durable before any record goes to the new file). Only call
   * from `between` or `exclusive`. If it fails, appends keep going to the current file.
   */
  rotate(retiredPath: string): Promise<void> {
    return this.file.rotate(retiredPath);
  }

  /** Writes what is queued, then closes the file; later appends are refused. */
  close(): Promise<void> {
    return this.file.close();
  }
}

export interface ParsedJournal {
  records: JournalRecord[];
  /** 1-based numbers of whole lines that failed their checksum or are not a record: damage, told. */
  damaged: number[];
  /** Bytes after the last newline (a kill -9 mid-append, never acknowledged), dropped. */
  tornBytes: number;
}

/**
 * Parses journal text (checksummed lines, core/storage/checked-lines.ts). A last line without
 * its newline is dropped, never applied, and reported as `tornBytes`; a whole line that fails its
 * checksum or is not a record is damage, skipped and reported by line number.
 */
export function parseJournal(text: string): ParsedJournal {
  const lines = readCheckedLines(text);
  const records: JournalRecord[] = [];
  const damaged = [...lines.damaged];
  for (const { text: line, line: n } of lines.records) {
    const rec = parseRecord(line);
    if (rec) records.push(rec);
    else damaged.push(n);
  }
  return { records, damaged: damaged.sort((a, b) => a - b), tornBytes: lines.tornBytes };
}

function parseRecord(line: string): JournalRecord | undefined {
  let rec: JournalRecord;
  try {
    rec = JSON.parse(line) as JournalRecord;
  } catch {
    return undefined;
  }
  if (!rec || typeof rec !== "object" || typeof rec.seq !== "number") return undefined;
  switch (rec.op) {
    case "add":
      return isRow(rec.row) ? rec : undefined;
    case "update":
      return typeof rec.requestId === "string" &&
        ["pending", "delivered", "dead"].includes(rec.status) &&
        typeof rec.deliveryState === "object" &&
        rec.deliveryState !== null &&
        typeof rec.at === "number"
        ? rec
        : undefined;
    case "seen":
    case "remove":
    case "replay":
      return typeof rec.requestId === "string" ? rec : undefined;
    case "adopt":
      return typeof rec.sentinelId === "string" && Array.isArray(rec.eventIds) && typeof rec.accepted === "number"
        ? rec
        : undefined;
    case "forget":
      return typeof rec.sentinelId === "string" ? rec : undefined;
    default:
      return undefined;
  }
}

/** The fields a row cannot do without (anything else has a safe default). */
export function isRow(r: unknown): r is OutboxRow {
  const row = r as OutboxRow;
  return (
    !!row &&
    typeof row.sentinelId === "string" &&
    typeof row.requestId === "string" &&
    typeof row.eventId === "string" &&
    typeof row.bodyBytes?.file === "string" &&
    ["pending", "delivered", "dead"].includes(row.status)
  );
}
