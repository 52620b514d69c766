import type { Command } from "commander";
import type { AcpAddInput } from "../acp/verbs.js";

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `svc acp add|ls|rm`: ACP agents in config `acpAgents`, beside the curated catalog. */
export function registerAcp(program: Command): void {
  const acp = program
    .command("acp")
    .description("ACP agents: config acpAgents entries, the curated catalog, adapter packages");
  acp
    .command("add")
    .description("Add or replace acpAgents.<slug> in config.json (shadows a catalog entry of the same slug)")
    .argument("<slug>", "adapter slug used by `svc sessions start --adapter <slug>`")
    .requiredOption("--bin <bin>", "executable to spawn")
    .option("--arg <arg>", "extra argv (repeatable)", collect)
    .option(
      "--env <K=V|K>",
      "always-on environment variable (repeatable); a bare KEY reads its value from stdin or a prompt without echo, the only way (with --env-from-file) for a secret such as ANTHROPIC_API_KEY",
      collect,
    )
    .option(
      "--env-from-file <path>",
      "KEY=VALUE lines (blank and # lines skipped), read before --env (repeatable)",
      collect,
    )
    .option("--name <name>", "display name")
    .option("--description <text>", "one-line summary shown by `acp ls`")
    .option("--install-hint <text>", "shown by `acp ls` when bin is not on PATH")
    .option("--resumable", "advertise resumable and native-resume continuation")
    .action(async (slug: string, opts: AcpAddInput) => {
      const { acpAdd } = await import("../acp/verbs.js");
      await acpAdd(slug, opts);
    });
  acp
    .command("ls")
    .alias("list")
    .description(
      "List ACP agents: source of each slug (package, config, catalog), what it shadows, install hints for missing binaries",
    )
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { acpLs } = await import("../acp/verbs.js");
      await acpLs(opts.json === true);
    });
  acp
    .command("rm")
    .description("Remove acpAgents.<slug> from config.json")
    .argument("<slug>")
    .action(async (slug: string) => {
      const { acpRm } = await import("../acp/verbs.js");
      await acpRm(slug);
    });
}
