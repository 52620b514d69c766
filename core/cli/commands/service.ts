import type { Command } from "commander";

const NAME_HELP =
  "unit name (default: svc for ~/.svc, svc-<8 hex of the home's sha256> for any other SVC_HOME); on macOS the agent is dev.svc.daemon[.<name>]";

/** `svc service install|uninstall|status`: a systemd user unit (Linux) or launchd agent (macOS) running `svc serve`. */
export function registerService(program: Command): void {
  const service = program
    .command("service")
    .description(
      "Run the daemon as a user service: a systemd user unit (Linux) or a launchd agent (macOS) that starts `svc serve` with this $SVC_HOME",
    );
  service
    .command("install")
    .description(
      "Write the unit (~/.config/systemd/user/<name>.service, or ~/Library/LaunchAgents/dev.svc.daemon.plist) and, when the service manager answers, enable and start it; otherwise print the commands to run. Refuses to overwrite a file svc did not write",
    )
    .option("--name <name>", NAME_HELP)
    .option("--no-start", "write the file only; print the commands that enable and start it")
    .option("--json", "machine-readable output: {platform, unit, path, ran, toRun, reason?}")
    .action(async (opts: { name?: string; json?: boolean; start?: boolean }) =>
      (await import("../service.js")).serviceInstall(opts),
    );
  service
    .command("uninstall")
    .description(
      "Stop and disable the unit, then remove its file; only a file svc wrote (it carries svc's header line): any other is refused (exit 1)",
    )
    .option("--name <name>", NAME_HELP)
    .option("--json", "machine-readable output: {platform, unit, path, removed, removedLinks, ran, toRun, reason?}")
    .action(async (opts: { name?: string; json?: boolean }) => (await import("../service.js")).serviceUninstall(opts));
  service
    .command("status")
    .description(
      "Say whether the unit is installed, where, and whether it is enabled and active (when the service manager answers); exit 0 installed, 3 not",
    )
    .option("--name <name>", NAME_HELP)
    .option(
      "--json",
      "machine-readable output: {installed, platform, unit, path, writtenBySvc?, enabled?, active?, managerUnreachable?}",
    )
    .action(async (opts: { name?: string; json?: boolean }) => (await import("../service.js")).serviceStatus(opts));
}
