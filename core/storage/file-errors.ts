/**
 * A write through a file descriptor fails without a path (`ENOSPC: no space left on device,
 * write`), and a temp file's error names the temp file. {@link namingFile} puts the file svc was
 * writing on the error, so that a full disk's answer names it (core/errors.ts, diskFullError).
 */
export function namingFile(path: string, err: unknown): unknown {
  const e = err as NodeJS.ErrnoException | null;
  if (typeof e === "object" && e !== null && typeof e.code === "string") e.path = path;
  return err;
}

/** Runs `write`, naming `path` on the error it throws. */
export async function writingFile<T>(path: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw namingFile(path, err);
  }
}
