import type { Command } from "commander";

/** `svc doctor [--json]`: offline, read-only check of `$SVC_HOME` and the environment; exit 0 when healthy, 1 when not. */
export function registerDoctor(program: Command): void {
  program
    .command("doctor")
    .description(
      "Check every file under $SVC_HOME (parse, checksums, modes, agreement between sentinels, webhook secrets and outbox) and the environment (Node version, git, gh, the daemon's port, NODE_EXTRA_CA_CERTS, webhooks.allowSubnets, adapters that fail to load, unknown config keys), offline and read-only, and say what to do; with a team store (SVC_STORE_URL or store.url is postgres://…), its tables instead of sentinels.json and the webhook files (schema versions, sentinel rows, secrets that open with the team key, pending bodies, the team's daemons), read-only; exit 0 when healthy (warnings allowed), 1 on any error",
    )
    .option("--json", "machine-readable output: {healthy, home, store, findings: [{severity, file, message, fix}]}")
    .action(async (opts: { json?: boolean }) => {
      const [{ runDoctor }, { svcHome }] = await Promise.all([
        import("../../doctor/doctor.js"),
        import("../../storage/paths.js"),
      ]);
      const report = await runDoctor(svcHome());
      if (opts.json) {
        const { printJson } = await import("../output.js");
        printJson(report);
      } else {
        const { printDoctorReport } = await import("../../doctor/print.js");
        printDoctorReport(report);
      }
      process.exitCode = report.healthy ? 0 : 1;
    });
}
