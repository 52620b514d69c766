/**
 * A journal that knows its own length. Beside each append journal svc keeps `<journal>.length`:
 * how many lines and bytes of the journal were acknowledged durable (and the last sequence number
 * they hold, when the journal's owner numbers its records), rewritten in place after each group
 * commit's data is durable and before any of its appenders is answered (see {@link LengthRecorder}
 * for why that write needs no fsync of its own). So a journal shorter than
 * its record lost records svc had acknowledged (whole lines cut from its end, or its last line
 * cut short): that is told, never taken for a torn tail. A journal longer than its record only
 * holds a write that was never answered (a kill -9 between the two writes), as before.
 *
 * The record holds two slots, 4 KiB apart, written in turn, each one checksummed line
 * `{"g":<generation>,"lines":…,"bytes":…,"seq":…}`: a write cut short (a power loss mid
 * write-back) spoils only the slot being written, and the other still holds an earlier count.
 * svc removes the record before it replaces or moves a journal (a rotation, a rewrite), so a
 * record is only ever held against the file it counted; a journal put back from an older copy is
 * held to it, and rightly told short.
 *
 * A loss found is written to `<journal>.missing` (core/storage/journal-loss.ts) before the record
 * is set to the journal as found. See docs/storage.md, "A journal that knows its length".
 */
import { constants } from "node:fs";
import { open, readFile, stat, unlink, type FileHandle } from "node:fs/promises";
import { checkedLine, readCheckedLines } from "./checked-lines.js";
import { writingFile } from "./file-errors.js";

/** The length record of the journal at `journal`. */
export const lengthRecordPath = (journal: string): string => `${journal}.length`;

const SLOT_BYTES = 4096;

/** What a journal holds that was acknowledged durable. */
export interface JournalLength {
  /** Lines (newlines) acknowledged. */
  lines: number;
  /** Bytes acknowledged (all whole lines). */
  bytes: number;
  /** The last sequence number the acknowledged lines hold, when the journal's owner gives them. */
  seq?: number;
}

interface Slot extends JournalLength {
  g: number;
}

/** A slot's record, or undefined when it is empty, cut short or fails its checksum. */
function decodeSlot(bytes: Buffer): Slot | undefined {
  const nl = bytes.indexOf(0x0a);
  // Only a checksummed line counts (readCheckedLines would take a bare `{…}` line unchecked).
  if (nl < 0 || !/^[0-9a-f]{8} /.test(bytes.subarray(0, 9).toString("latin1"))) return undefined;
  const [record] = readCheckedLines(bytes.subarray(0, nl + 1).toString("utf8")).records;
  if (!record) return undefined;
  try {
    const s = JSON.parse(record.text) as Partial<Slot>;
    const ok = [s.g, s.lines, s.bytes].every((n) => Number.isSafeInteger(n) && (n as number) >= 0);
    if (!ok || (s.seq !== undefined && !Number.isSafeInteger(s.seq))) return undefined;
    return s as Slot;
  } catch {
    return undefined;
  }
}

/** The journal's length record, or undefined when it has none (or neither slot holds). */
export async function readJournalLength(journal: string): Promise<(JournalLength & { g: number }) | undefined> {
  let bytes: Buffer;
  try {
    bytes = await readFile(lengthRecordPath(journal));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const slots = [bytes.subarray(0, SLOT_BYTES), bytes.subarray(SLOT_BYTES, 2 * SLOT_BYTES)]
    .map(decodeSlot)
    .filter((s): s is Slot => s !== undefined);
  return slots.sort((a, b) => b.g - a.g)[0];
}

/**
 * Writes a journal's length record after each batch (see the module comment). A write goes to the
 * page cache, not to the disk: it is made after the batch's data is durable, so whatever part of
 * the record reaches the disk never counts more than the journal holds there, and a kill -9 keeps
 * it whole. Only a power loss can cost the last counts (never add any); a write that may shrink
 * the journal below what the disk's record counts (an emptying) is made `durable`, and so is the
 * last one, at close.
 */
export class LengthRecorder {
  private constructor(
    private readonly handle: FileHandle,
    private g: number,
  ) {}

  /** Opens (creating with `mode`) the record of `journal`, continuing after generation `g`. */
  static async open(journal: string, g: number, mode = 0o600): Promise<LengthRecorder> {
    const path = lengthRecordPath(journal);
    const handle = await writingFile(path, () => open(path, constants.O_RDWR | constants.O_CREAT, mode));
    return new LengthRecorder(handle, g);
  }

  /** Records `length` (into the slot the previous write did not use); `durable`: on disk before it resolves. */
  async write(length: JournalLength, options: { durable?: boolean } = {}): Promise<void> {
    const g = this.g + 1;
    const { seq, ...counts } = length;
    const line = Buffer.from(checkedLine(JSON.stringify({ g, ...counts, ...(seq !== undefined ? { seq } : {}) })));
    let written = 0;
    const at = (g % 2) * SLOT_BYTES;
    while (written < line.length)
      written += (await this.handle.write(line, written, line.length - written, at + written)).bytesWritten;
    if (options.durable) await this.handle.datasync();
    this.g = g;
  }

  /** Makes the last write durable, then closes the record. */
  async close(): Promise<void> {
    try {
      await this.handle.datasync();
    } finally {
      await this.handle.close();
    }
  }
}

/** Removes a journal's length record (before the journal is replaced or deleted: never held to a stale one). */
export async function forgetJournalLength(journal: string): Promise<void> {
  await unlink(lengthRecordPath(journal)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}

/** A journal as found, against its length record. */
export interface JournalCheck {
  /** The record, when there is one. */
  recorded?: JournalLength;
  /** The file's size, and the end of its last whole line. */
  size: number;
  wholeEnd: number;
  /** Whole lines (newlines) in the file. */
  lines: number;
  /** Bytes after the last newline; `acknowledged` when they are part of a line the record counts (lost with it). */
  torn: { bytes: number; acknowledged: boolean };
  /** Acknowledged records the file no longer holds (whole lines cut from its end, or its last cut short). */
  missing?: { records: number; bytes: number; lastSeq?: number };
}

/** Counts the newlines of `bytes` (from `from`). */
export function countLines(bytes: Buffer, from = 0): number {
  let n = 0;
  for (let i = bytes.indexOf(0x0a, from); i >= 0; i = bytes.indexOf(0x0a, i + 1)) n++;
  return n;
}

/** Compares a journal's content with its record. */
export function compareLength(content: Buffer, record: JournalLength | undefined): JournalCheck {
  const size = content.length;
  const wholeEnd = content.lastIndexOf(0x0a) + 1;
  const lines = countLines(content);
  const recorded = record;
  const short = recorded !== undefined && (wholeEnd < recorded.bytes || lines < recorded.lines);
  const check: JournalCheck = { size, wholeEnd, lines, torn: { bytes: size - wholeEnd, acknowledged: false } };
  if (recorded) check.recorded = recorded;
  if (short) {
    check.missing = {
      records: Math.max(1, recorded.lines - lines),
      bytes: Math.max(0, recorded.bytes - wholeEnd),
      ...(recorded.seq !== undefined ? { lastSeq: recorded.seq } : {}),
    };
    check.torn.acknowledged = check.torn.bytes > 0;
  }
  return check;
}

/** Reads the journal at `path` and checks it against its record (read-only); undefined when the journal does not exist. */
export async function inspectJournal(path: string): Promise<JournalCheck | undefined> {
  const handle = await open(path, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!handle) return undefined;
  try {
    return compareLength(await handle.readFile(), await readJournalLength(path));
  } finally {
    await handle.close();
  }
}

/** The journal's size, or undefined when it does not exist. */
export async function journalSize(path: string): Promise<number | undefined> {
  return stat(path).then(
    (st) => st.size,
    (err: NodeJS.ErrnoException) => {
      if (err.code === "ENOENT") return undefined;
      throw err;
    },
  );
}

/**
 * Opens the length record of the journal at `path` and, unless `current` already says so, records
 * `length`. A record that cannot be created (a full disk) leaves the journal without one, as
 * before this record existed: nothing is refused for it, and the next open tries again.
 */
export async function startRecording(
  path: string,
  mode: number | undefined,
  g: number,
  length: JournalLength,
  current?: JournalLength,
): Promise<LengthRecorder | undefined> {
  let recorder: LengthRecorder | undefined;
  try {
    recorder = await LengthRecorder.open(path, g, mode ?? 0o600);
    const same =
      current !== undefined &&
      current.lines === length.lines &&
      current.bytes === length.bytes &&
      current.seq === length.seq;
    // Both slots, so each has its blocks from now on: a later write never needs free space.
    if (!same) for (let i = 0; i < 2; i++) await recorder.write(length);
    return recorder;
  } catch {
    await recorder?.close().catch(() => undefined);
    return undefined;
  }
}
