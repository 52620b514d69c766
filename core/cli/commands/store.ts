import type { Command } from "commander";

/** `svc store keygen` (the team key) and `svc store migrate` (a home's records between its files and a team store). */
export function registerStore(program: Command): void {
  const cmd = program
    .command("store")
    .description("The store sentinels live in: the files under $SVC_HOME, or a team's PostgreSQL (docs/team-mode.md)");
  cmd
    .command("keygen")
    .argument("<file>", "where to write the key (must not exist)")
    .description(
      "Write a fresh team key (32 random bytes, base64) to <file> with mode 0600, for store.keyFile or SVC_STORE_KEY_FILE; prints only the path, never the key; refuses to overwrite a file (exit 1)",
    )
    .option("--json", "machine-readable output: {path}")
    .action(async (file: string, opts: { json?: boolean }) =>
      (await import("../store-keygen.js")).storeKeygen(file, opts),
    );
  cmd
    .command("migrate")
    .description(
      "Copy this home's sentinels, webhook secrets and deliveries (pending and past) into a team store (--to postgres://user@host:port/db; the password through PGPASSWORD or ~/.pgpass, never in the URL), " +
        "or from the configured team store (SVC_STORE_URL or store.url) into this home's files (--to file). Needs the team key (SVC_STORE_KEY or a key file) and no daemon running on this home. " +
        "Nothing is deleted from the source; records already at the destination are kept (skipped), so running it again finishes a run cut short. " +
        "Then runs svc doctor's checks of both sides; exit 0 when they find no error, 1 otherwise",
    )
    .requiredOption("--to <url|file>", "the destination: a postgres:// URL without password, or file")
    .option(
      "--json",
      "machine-readable output: {from, to, sentinels: {copied, skipped}, targets: [{kind, sentinels, exported, imported, note}], checks: {source, destination}, healthy}",
    )
    .action(async (opts: { to: string; json?: boolean }) => {
      const [{ migrateStore }, { svcHome }] = await Promise.all([
        import("../../store/migrate/migrate.js"),
        import("../../storage/paths.js"),
      ]);
      const result = await migrateStore(svcHome(), opts.to);
      if (opts.json) (await import("../output.js")).printJson(result);
      else (await import("../../store/migrate/print.js")).printMigrateResult(result);
      process.exitCode = result.healthy ? 0 : 1;
    });
}
