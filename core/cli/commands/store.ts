import type { Command } from "commander";

/** `svc store keygen <file>`: the team store's key (docs/team-mode.md). */
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
}
