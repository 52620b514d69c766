import { readTextFile } from "../storage/json-file.js";
import { linesBackwards } from "../storage/read-backwards.js";
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

/**
 * The last `count` lines of a JSONL transcript, read backwards from its end only as far as they
 * need (a recap of a long session does not read the whole file). Torn or unparsable lines are
 * skipped as {@link readTranscript} skips them; a missing file has none. `chunkBytes` is how much
 * each step reads (see {@link linesBackwards}).
 */
export async function readTranscriptTail(path: string, count: number, chunkBytes?: number): Promise<TranscriptLine[]> {
  const found: TranscriptLine[] = [];
  if (count <= 0) return found;
  for await (const { bytes } of linesBackwards(path, chunkBytes)) {
    const line = parseLine(bytes.toString("utf8"));
    if (line && found.push(line) === count) break;
  }
  return found.reverse();
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
