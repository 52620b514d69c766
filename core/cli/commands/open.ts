import type { Command } from "commander";

/** `svc open [--no-browser] [--print] [--json]`: the dashboard in the browser, by a one-time login link. */
export function registerOpen(program: Command): void {
  program
    .command("open")
    .description(
      "Open the daemon's dashboard in the browser with a one-time login link (60 s, single use, in the URL's fragment; never the bearer token); exit 0 when opened or when it printed the link (--no-browser, or no browser could be opened: no display, no opener, or the opener exited non-zero; it says why), 1 when no daemon runs",
    )
    .option("--no-browser", "do not start a browser: print the login link instead")
    .option("--print", "also print the login link (it works once, within 60 s)")
    .option("--json", "machine-readable output: {url, expiresAt, opened, reason?} (reason: why no browser was opened)")
    .action(async (opts: { browser: boolean; print?: boolean; json?: boolean }) =>
      (await import("../open-dashboard.js")).openDashboard(opts),
    );
}
