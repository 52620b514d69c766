/**
 * Node's on-disk compile cache for the CLI (`module.enableCompileCache`, Node 22.1 and later; a
 * no-op on Node 20, which lacks it): later runs skip compiling svc's modules. The cache lives in
 * `<os.tmpdir()>/svc-compile-cache-<uid>`, a directory this user owns and nobody else may write
 * (checked at every run; otherwise no cache is used), so no other account can plant code there.
 * `NODE_DISABLE_COMPILE_CACHE=1` turns it off, `NODE_COMPILE_CACHE=<dir>` moves it (Node's own).
 */
import { lstatSync, mkdirSync } from "node:fs";
import module from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";

type Enable = (dir?: string) => unknown;

export function enableCompileCache(
  options: { enable?: Enable | undefined; tmp?: string; env?: NodeJS.ProcessEnv } = {},
): void {
  const enable = "enable" in options ? options.enable : (module as { enableCompileCache?: Enable }).enableCompileCache;
  if (typeof enable !== "function") return;
  try {
    if ((options.env ?? process.env).NODE_COMPILE_CACHE) return void enable();
    const uid = process.getuid?.();
    const dir = join(options.tmp ?? tmpdir(), `svc-compile-cache-${uid ?? "user"}`);
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") return;
    }
    const st = lstatSync(dir);
    if (!st.isDirectory() || (uid !== undefined && st.uid !== uid) || (st.mode & 0o022) !== 0) return;
    enable(dir);
  } catch {
    // A cache is an optimisation: without one the CLI runs the same, compiling afresh.
  }
}
