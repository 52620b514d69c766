/**
 * Reading a file of lines from its end, only as far back as the caller goes: the last lines of a
 * long transcript, or where a journal's last whole line ends, without reading the whole file.
 */
import { open } from "node:fs/promises";

/** Bytes read per step by default. */
const CHUNK_BYTES = 64 * 1024;

export interface BackwardsLine {
  /** Offset in the file of the line's first byte. */
  start: number;
  /** The line's bytes, without its newline. */
  bytes: Buffer;
}

/**
 * The lines of the file at `path`, last first. The first one is what follows the last newline:
 * empty when the file ends with a newline (or is empty), a torn line otherwise, the whole file
 * when it has no newline; so `start + bytes.length` of the first is the file's size and its
 * `start` the end of the last whole line. Then each whole line, without its newline. Nothing for
 * a file that does not exist. Reads `chunkBytes` at a time (small when only a few short lines are
 * wanted from many files) and only while the caller iterates; the file is closed when the caller
 * stops. A line is held whole, copied once however many chunks it spans; newlines never occur
 * inside a UTF-8 sequence, so a line's bytes are whole characters.
 */
export async function* linesBackwards(path: string, chunkBytes = CHUNK_BYTES): AsyncGenerator<BackwardsLine> {
  const handle = await open(path, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });
  if (!handle) return;
  try {
    const { size } = await handle.stat();
    // The bytes after the current chunk of the line being assembled (nearest first).
    let after: Buffer[] = [];
    for (let to = size; to > 0; ) {
      const from = Math.max(0, to - chunkBytes);
      const chunk = Buffer.alloc(to - from);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, from);
      let cut = bytesRead;
      for (;;) {
        // (A negative offset would count from the end.)
        const nl = cut > 0 ? chunk.lastIndexOf(0x0a, cut - 1) : -1;
        if (nl < 0) break;
        yield { start: from + nl + 1, bytes: Buffer.concat([chunk.subarray(nl + 1, cut), ...after]) };
        after = [];
        cut = nl;
      }
      after.unshift(chunk.subarray(0, cut));
      to = from;
    }
    yield { start: 0, bytes: Buffer.concat(after) };
  } finally {
    await handle.close();
  }
}
