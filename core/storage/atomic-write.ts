import { mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { writingFile } from "./file-errors.js";

export interface AtomicWriteOptions {
  /** File mode of a newly created file, applied at creation (never chmod-after). */
  mode?: number;
}

/**
 * Writes `data` to `path` so that a kill -9 at any moment leaves either the old or the new file:
 * temp file in the same directory (created with `mode`), fsync, rename, then fsync the directory
 * so the rename itself is durable.
 */
export async function writeFileDurable(path: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): Promise<void> {
  const dir = dirname(path);
  // An error names `path` (not write-file-atomic's temp file), so a full disk says which file.
  await writingFile(path, async () => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writeFileAtomic(path, typeof data === "string" ? data : Buffer.from(data), {
      fsync: true,
      ...(options.mode !== undefined ? { mode: options.mode } : {}),
    });
    await fsyncDir(dir);
  });
}

export async function fsyncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    await handle.close();
  }
}
