/**
 * Checksummed lines for append journals: each record is one line, `<crc32 of the text, 8 hex> <text>\n`.
 * Reading a journal tells three things apart:
 * - a torn tail: bytes after the last newline, what a kill -9 (or a full disk) cut short; such a
 *   write was never acknowledged, so dropping it loses nothing that was promised;
 * - damage: a whole line (a newline follows it) whose checksum does not hold: something changed a
 *   file svc had written whole, so whatever that line recorded is lost and must be told;
 * - lines from before checksums (a bare `{...}` JSON line), read as they are and counted `unchecked`.
 * See docs/storage.md.
 */
import { copyFile, open } from "node:fs/promises";
import { dirname } from "node:path";
import { crc32 } from "node:zlib";
import { fsyncDir } from "./atomic-write.js";
import { writingFile } from "./file-errors.js";

/** One record as a checksummed line (`text` must not contain a newline). */
export function checkedLine(text: string): string {
  return `${crc32(text).toString(16).padStart(8, "0")} ${text}\n`;
}

const HEX = Buffer.from("0123456789abcdef", "latin1");

/**
 * Records as checksummed lines, the same bytes as {@link checkedLine} of each, encoded straight into
 * one buffer: each text is encoded once and its checksum taken over those bytes (no line string,
 * no joined text, no second encoding for the checksum). `texts` must not contain newlines.
 */
export function checkedLinesBytes(texts: readonly string[]): Buffer {
  let total = 0;
  const lengths = texts.map((t) => Buffer.byteLength(t, "utf8"));
  for (const n of lengths) total += n + 10;
  const out = Buffer.allocUnsafe(total);
  let at = 0;
  for (let i = 0; i < texts.length; i++) {
    const start = at + 9;
    const end = start + out.write(texts[i]!, start, "utf8");
    let sum = crc32(out.subarray(start, end));
    for (let d = 7; d >= 0; d--, sum >>>= 4) out[at + d] = HEX[sum & 15]!;
    out[at + 8] = 0x20;
    out[end] = 0x0a;
    at = end + 1;
  }
  return out;
}

/** The checksum of a whole text, as 8 hex digits (snapshots carry it in a field of their own). */
export function textChecksum(text: string): string {
  return crc32(text).toString(16).padStart(8, "0");
}

export interface CheckedLines {
  /** The records' texts, in order, each checked (or from before checksums). */
  records: Array<{ text: string; line: number }>;
  /** Lines without a checksum (written before svc checked them), read as they are. */
  unchecked: number;
  /** Whole lines whose checksum failed (1-based line numbers). */
  damaged: number[];
  /** Bytes after the last newline (a torn last write), dropped. */
  tornBytes: number;
}

/** Splits journal text into its checked records, telling damage apart from a torn tail. */
export function readCheckedLines(text: string): CheckedLines {
  const out: CheckedLines = { records: [], unchecked: 0, damaged: [], tornBytes: 0 };
  const lines = text.split("\n");
  const tail = lines.pop() ?? "";
  out.tornBytes = Buffer.byteLength(tail);
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const n = i + 1;
    if (line.startsWith("{")) {
      out.unchecked++;
      out.records.push({ text: line, line: n });
      return;
    }
    const space = line.indexOf(" ");
    const sum = line.slice(0, space);
    const body = line.slice(space + 1);
    if (space !== 8 || !/^[0-9a-f]{8}$/.test(sum) || textChecksum(body) !== sum) out.damaged.push(n);
    else out.records.push({ text: body, line: n });
  });
  return out;
}

/**
 * Keeps a copy of a damaged file beside it (`<file>.damaged-<ms>`, durable), so that whatever
 * svc does with the file next (a compaction replaces it) never loses the evidence. Returns the copy's path.
 */
export async function keepDamagedCopy(path: string, now: number): Promise<string> {
  const aside = `${path}.damaged-${now}`;
  await writingFile(aside, async () => {
    await copyFile(path, aside);
    const handle = await open(aside, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fsyncDir(dirname(aside));
  });
  return aside;
}
