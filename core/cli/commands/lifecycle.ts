import type { Command } from "commander";
import { STOP_TIMEOUT_FLAG, SINCE_FLAG, durationHelp, timeHelp } from "../duration-flags.js";

/** `svc stop` and `svc logs`: the detached daemon's lifecycle beside `svc start` (serve.ts) and `svc status`. */
export function registerLifecycle(program: Command): void {
  program
    .command("stop")
    .description(
      "Stop the daemon running for $SVC_HOME (SIGTERM) and wait until its process is gone; exit 0 stopped, 3 not running, 1 still running after the timeout",
    )
    .option(
      "--timeout <duration>",
      durationHelp("how long to wait for the daemon to exit (default 30s)", STOP_TIMEOUT_FLAG),
    )
    .option("--force", "when the daemon is still running after the timeout, kill it (SIGKILL)")
    .option("--json", "machine-readable output: {stopped, pid, forced, home} or {stopped: false, running: false, home}")
    .action(async (opts: { timeout?: string; force?: boolean; json?: boolean }) =>
      (await import("../daemon-stop.js")).stopDaemon(opts),
    );
  program
    .command("logs")
    .description(
      "Print the daemon's log ($SVC_HOME/logs/daemon.log and its rotated files), readable: time, level, message, key=value",
    )
    .option("-f, --follow", "keep printing lines as the daemon writes them (across rotations) until interrupted")
    .option("--level <level>", "only lines at this level or above: debug, info, warn, error")
    .option("--since <when>", timeHelp("only lines since", SINCE_FLAG))
    .option("-n, --lines <n>", "print the last n lines that match (default 100; every line since --since)")
    .option("--json", "print the log's JSON lines as they are")
    .action(async (opts: { follow?: boolean; level?: string; since?: string; json?: boolean; lines?: string }) =>
      (await import("../daemon-logs.js")).printLogs(opts),
    );
}
