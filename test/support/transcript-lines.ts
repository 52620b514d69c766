import { readFile } from "node:fs/promises";

export interface Line {
  seq: number;
  type: string;
  data?: any;
}

/** A session transcript's lines as written (none while the file does not exist). */
export async function transcriptLines(path: string): Promise<Line[]> {
  const text = await readFile(path, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
}
