/**
 * `svc stop [--timeout <duration>] [--force] [--json]`: stops the daemon runtime.json names with SIGTERM
 * and waits for its process to be gone. Exit 0 stopped, 3 not running (as `svc status`), 1 still
 * running after the timeout (`--force` then sends SIGKILL).
 */
import { readFile } from "node:fs/promises";
import { SvcError } from "../errors.js";
import {
  baseUrlOf,
  isProcessAlive,
  readRuntimeInfo,
  removeRuntimeInfo,
  type RuntimeInfo,
} from "../daemon/runtime-file.js";
import { svcHome } from "../storage/paths.js";
import { parseDurationFlag } from "./duration.js";
import { STOP_TIMEOUT_FLAG } from "./duration-flags.js";
import { printJson, println } from "./output.js";

const DEFAULT_TIMEOUT_S = 30;
/** How long a SIGKILLed process may take to be gone. */
const KILL_WAIT_MS = 10_000;

/** Polls until the process is gone; true when it went within `ms`. */
async function gone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!isProcessAlive(pid)) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Whether the live pid in runtime.json is still the daemon: its `/health` names that pid, or, when
 * it does not answer (wedged, or still starting), the process's command line is svc's `serve`
 * (where /proc tells). A pid the system gave to another process since is never signalled.
 */
async function isTheDaemon(info: RuntimeInfo): Promise<boolean> {
  const health = await fetch(`${baseUrlOf(info)}/health`, { signal: AbortSignal.timeout(2_000) })
    .then((r) => (r.ok ? (r.json() as Promise<{ pid?: number }>) : undefined))
    .catch(() => undefined);
  if (health?.pid !== undefined) return health.pid === info.pid;
  const cmdline = await readFile(`/proc/${info.pid}/cmdline`, "utf8").catch(() => undefined);
  return cmdline === undefined || cmdline.split("\0").includes("serve");
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return; // gone already
    throw new SvcError("forbidden", `cannot send ${sig} to the daemon (pid ${pid}): ${code ?? (err as Error).message}`);
  }
}

export async function stopDaemon(o: { timeout?: string; force?: boolean; json?: boolean }): Promise<void> {
  const timeoutMs =
    o.timeout === undefined ? DEFAULT_TIMEOUT_S * 1000 : parseDurationFlag(o.timeout, STOP_TIMEOUT_FLAG);
  const home = svcHome();
  const info = await readRuntimeInfo(home);
  if (!info || !isProcessAlive(info.pid) || !(await isTheDaemon(info))) {
    // A runtime.json whose daemon is gone (killed with -9) is svc's own leftover: removed.
    if (info) await removeRuntimeInfo(home, info.pid);
    const stale = info ? `; removed the runtime.json left by pid ${info.pid}, which is gone` : "";
    if (o.json) printJson({ stopped: false, running: false, home, ...(info ? { stalePid: info.pid } : {}) });
    else println(`svc daemon: not running (home ${home}${stale})`);
    process.exitCode = 3;
    return;
  }
  const { pid } = info;
  signal(pid, "SIGTERM");
  let forced = false;
  if (!(await gone(pid, timeoutMs))) {
    if (!o.force)
      throw new SvcError(
        "timeout",
        `the daemon (pid ${pid}) is still running ${timeoutMs / 1000} s after SIGTERM; wait longer with --timeout <s>, or kill it with \`svc stop --force\` (SIGKILL after the timeout)`,
      );
    signal(pid, "SIGKILL");
    forced = true;
    if (!(await gone(pid, KILL_WAIT_MS)))
      throw new SvcError("timeout", `the daemon (pid ${pid}) is still there after SIGKILL`);
    // Killed, it could not remove its runtime.json.
    await removeRuntimeInfo(home, pid);
  }
  if (o.json) printJson({ stopped: true, pid, forced, home });
  else println(`svc daemon stopped (pid ${pid}${forced ? ", killed with SIGKILL after the timeout" : ""})`);
}
