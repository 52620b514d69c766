import type { Command } from "commander";

/** `svc status [--json]`: is a daemon running for this home, where, and what it warns of; exit 0 running, 3 not. */
export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "Say whether a daemon runs for $SVC_HOME (pid, address, version, uptime) and what it warns of, such as a daemon open to the network without daemon.authToken; exit 0 when running, 3 when not",
    )
    .option(
      "--json",
      "machine-readable output: {running, home, pid, url, bind, port, version, startedAt, uptimeMs, answering, warnings}",
    )
    .action(async (opts: { json?: boolean }) => (await import("../status.js")).printStatus(opts));
}
