import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import lockfile from "proper-lockfile";
import { SvcError } from "../errors.js";

export interface LockOptions {
  /** How long to keep trying before giving up, in ms. Default 10 s. */
  waitMs?: number;
  /** A lock not refreshed for this long is considered abandoned (its holder died). Default 10 s. */
  staleMs?: number;
}

/**
 * Runs `fn` while holding a cross-process lock on `path` (a `<path>.lock` directory, refreshed while
 * held and taken over when stale, so a holder killed with -9 never wedges the others).
 */
export async function withFileLock<T>(path: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const waitMs = options.waitMs ?? 10_000;
  const staleMs = options.staleMs ?? 10_000;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(path, {
      realpath: false,
      stale: staleMs,
      update: Math.max(1000, Math.floor(staleMs / 2)),
      retries: { retries: Math.ceil(waitMs / 25), minTimeout: 5, maxTimeout: 50, factor: 1.2, randomize: true },
      onCompromised: () => {
        // Our lock was taken over as stale (we stalled for longer than staleMs). The write we
        // are in will still be atomic; the next locked writer re-reads the file.
      },
    });
  } catch (err) {
    throw new SvcError("unavailable", `could not lock ${path}: another svc process holds it`, { cause: err });
  }
  try {
    return await fn();
  } finally {
    await release().catch(() => undefined);
  }
}
