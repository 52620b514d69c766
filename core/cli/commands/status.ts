import type { Command } from "commander";

/**
 * `svc status [--json]`: is a daemon running for this home, where, what it holds and what it warns of;
 * exit 0 running, 3 not. core/cli/fast-path.ts runs the same action without this program.
 */
export function registerStatus(program: Command): void {
  program
    .command("status")
    .description(
      "Say whether a daemon runs for $SVC_HOME (pid, address, version, uptime) and what it holds: sessions by activity, sentinels, pending and dead webhook deliveries, adapters loaded and failed, pairings and the tunnel; and what it warns of, such as a daemon open to the network without daemon.authToken. Exit 0 when running, 3 when not",
    )
    .option(
      "--json",
      "machine-readable output: {running, home, pid, url, bind, port, version, startedAt, uptimeMs, answering, warnings, sessions, sentinels, deliveries, adapters, remote} (docs/operations.md)",
    )
    .action(async (opts: { json?: boolean }) => (await import("../status.js")).printStatus(opts));
}
