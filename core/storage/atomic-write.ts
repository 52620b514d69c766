import { mkdir, open, stat } from "node:fs/promises";
import { dirname } from "node:path";
import writeFileAtomic from "write-file-atomic";
import { writingFile } from "./file-errors.js";

export interface AtomicWriteOptions {
  /** The file's mode after the write, whether it existed or not; set on the temp file at its creation (never chmod-after). */
  mode?: number;
  /**
   * Without `mode`: the mode of the file when it does not exist yet. An existing file keeps its
   * own mode (and owner), so a write never widens what the owner narrowed, nor narrows what they chose.
   */
  createMode?: number;
}

/**
 * Writes `data` to `path` so that a kill -9 at any moment leaves either the old or the new file:
 * temp file in the same directory (created with `mode`), fsync, rename, then fsync the directory
 * so the rename itself is durable.
 */
export async function writeFileDurable(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const dir = dirname(path);
  // An error names `path` (not write-file-atomic's temp file), so a full disk says which file.
  await writingFile(path, async () => {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const mode =
      options.mode ?? (options.createMode !== undefined && !(await exists(path)) ? options.createMode : undefined);
    // Without a mode write-file-atomic gives the new file the old one's mode and owner.
    await writeFileAtomic(path, typeof data === "string" ? data : Buffer.from(data), {
      fsync: true,
      ...(mode !== undefined ? { mode } : {}),
    });
    await fsyncDir(dir);
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false;
    throw err;
  }
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
