import type { Command } from "commander";

/** `svc config show|get|set|unset|schema|path`; implementations load lazily from ../config-verbs.js. */
export function registerConfig(program: Command): void {
  const config = program
    .command("config")
    .description("Show and edit $SVC_HOME/config.json (created by the first `config set`)");
  config
    .command("show")
    .description(
      "Print the file, or with --effective the effective configuration (defaults, file, profile, env folded in)",
    )
    .option("--json", "print JSON")
    .option("--effective", "the effective configuration, with the source of each value")
    .option("--reveal", "show secrets instead of [redacted]")
    .option("--profile <name>", "fold in this profile (overrides activeProfile)")
    .action(async (opts: { json?: boolean; effective?: boolean; reveal?: boolean; profile?: string }) => {
      const { showConfig } = await import("../config-verbs.js");
      await showConfig(opts);
    });
  config
    .command("get <key>")
    .description("Print the effective value of a dotted key (e.g. daemon.port, models.review.small)")
    .option("--json", "print JSON")
    .option("--source", "also say where the value came from (flag, env VAR, profile NAME, config, default)")
    .option("--reveal", "show secrets instead of [redacted]")
    .option("--profile <name>", "fold in this profile (overrides activeProfile)")
    .action(async (key: string, opts: { json?: boolean; source?: boolean; reveal?: boolean; profile?: string }) => {
      const { getConfig } = await import("../config-verbs.js");
      await getConfig(key, opts);
    });
  config
    .command("set <key> [value]")
    .description(
      "Set a dotted key; the value is JSON when it parses, else a string. Validated before anything is written. " +
        "Without a value it is read from --from-file, a prompt without echo, or piped stdin; a secret (daemon.authToken, tunnel.token, …) is only taken that way",
    )
    .option("--string", "take the value as a string even when it parses as JSON")
    .option("--from-file <path>", "read the value from this file (a trailing newline is dropped)")
    .action(async (key: string, value: string | undefined, opts: { string?: boolean; fromFile?: string }) => {
      const { setConfig } = await import("../config-verbs.js");
      await setConfig(key, value, opts);
    });
  config
    .command("unset <key>")
    .description("Remove a dotted key from the file (its default applies again)")
    .action(async (key: string) => {
      const { unsetConfig } = await import("../config-verbs.js");
      await unsetConfig(key);
    });
  config
    .command("schema")
    .description("Print the JSON Schema of config.json (for editors)")
    .action(async () => {
      const { printSchema } = await import("../config-verbs.js");
      printSchema();
    });
  config
    .command("path")
    .description("Print the path of config.json")
    .option("--json", "print JSON ({path, exists})")
    .action(async (opts: { json?: boolean }) => {
      const { configFilePath } = await import("../../config/config-path.js");
      const { existsSync } = await import("node:fs");
      const path = configFilePath();
      process.stdout.write(
        opts.json ? JSON.stringify({ path, exists: existsSync(path) }, null, 2) + "\n" : path + "\n",
      );
    });
}
