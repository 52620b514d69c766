import { open } from "node:fs/promises";
import { readTextFile } from "../storage/json-file.js";
import type { TranscriptLine } from "./transcript.js";

/** Reads a JSONL transcript; a torn last line (killed mid-write) is skipped. */
export async function readTranscript(path: string, afterSeq = 0): Promise<TranscriptLine[]> {
  const text = await readTextFile(path);
  if (text === undefined) return [];
  const out: TranscriptLine[] = [];
  for (const raw of text.split("\n")) {
    const line = parseLine(raw);
    if (line && line.seq > afterSeq) out.push(line);
  }
  return out;
}

/** Bytes read per step while reading a transcript backwards. */
const TAIL_CHUNK = 64 * 1024;

/**
 * The last `count` lines of a JSONL transcript, read backwards from its end only as far as they
 * need (a recap of a long session does not read the whole file). Torn or unparsable lines are
 * skipped as {@link readTranscript} skips them; a missing file has none. `chunkBytes` is how much
 * each step reads: small when only a few short lines are wanted from many files.
 */
export async function readTranscriptTail(path: string, count: number, chunkBytes = TAIL_CHUNK): Promise<TranscriptLine[]> {
  if (count <= 0) return [];
  const handle = await open(path, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!handle) return [];
  try {
    const { size } = await handle.stat();
    const found: TranscriptLine[] = [];
    // `partial` holds the bytes from `to` on that are not yet known to start a line (the rest
    // of a line that begins before `to`), as chunks joined only once a newline ends the search,
    // so a very long line is copied once. Newlines never occur inside a UTF-8 sequence, so
    // cutting at them never splits a character.
    let partial: Buffer[] = [];
    for (let to = size; to > 0 && found.length < count; ) {
      const from = Math.max(0, to - chunkBytes);
      const chunk = Buffer.alloc(to - from);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, from);
      const read = chunk.subarray(0, bytesRead);
      const firstLineEnd = from === 0 ? -1 : read.indexOf(0x0a);
      if (from > 0 && firstLineEnd < 0) {
        partial.unshift(read);
      } else {
        const lines = Buffer.concat([read.subarray(firstLineEnd + 1), ...partial]).toString("utf8").split("\n");
        partial = [read.subarray(0, firstLineEnd + 1)];
        for (let i = lines.length - 1; i >= 0 && found.length < count; i--) {
          const line = parseLine(lines[i]!);
          if (line) found.push(line);
        }
      }
      to = from;
    }
    return found.reverse();
  } finally {
    await handle.close();
  }
}

function parseLine(raw: string): TranscriptLine | undefined {
  if (!raw.trim()) return undefined;
  try {
    const line = JSON.parse(raw) as TranscriptLine;
    return typeof line?.seq === "number" ? line : undefined;
  } catch {
    return undefined; // torn line
  }
}
