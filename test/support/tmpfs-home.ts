/**
 * A real full disk for the disk-full e2e tests: a temp home with a small tmpfs mounted on it
 * (mounting needs root; elsewhere `mounted` is false and the tests skip), and a filler that takes
 * every block left.
 */
import { execFileSync } from "node:child_process";
import { closeSync, openSync, writeSync } from "node:fs";
import { makeTempHome } from "./cli.js";

export interface TmpfsHome {
  home: string;
  /** False where the tmpfs could not be mounted (not root): the home is then a plain temp folder. */
  mounted: boolean;
  cleanup(): Promise<void>;
}

/** A temp home with a tmpfs of `size` (e.g. `"2m"`) mounted on it, when this process may mount one. */
export async function tmpfsHome(prefix: string, size: string): Promise<TmpfsHome> {
  const t = await makeTempHome(prefix);
  let mounted = false;
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${size},mode=0700`, "tmpfs", t.home], { stdio: "ignore" });
    mounted = true;
  } catch {
    mounted = false;
  }
  return {
    home: t.home,
    mounted,
    cleanup: async () => {
      if (mounted) execFileSync("umount", ["-l", t.home]);
      await t.cleanup();
    },
  };
}

/** Writes `path` until the filesystem has no block left. */
export function fill(path: string): void {
  const fd = openSync(path, "w");
  const block = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, block);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
  } finally {
    closeSync(fd);
  }
}
