import { readTextFile } from "../storage/json-file.js";
import type { TranscriptLine } from "./transcript.js";

/** Reads a JSONL transcript; a torn last line (killed mid-write) is skipped. */
export async function readTranscript(path: string, afterSeq = 0): Promise<TranscriptLine[]> {
  const text = await readTextFile(path);
  if (text === undefined) return [];
  const out: TranscriptLine[] = [];
  for (const raw of text.split("\n")) {
    if (!raw.trim()) continue;
    try {
      const line = JSON.parse(raw) as TranscriptLine;
      if (typeof line.seq === "number" && line.seq > afterSeq) out.push(line);
    } catch {
      // torn line
    }
  }
  return out;
}
