import { Command, CommanderError } from "commander";
import { SVC_VERSION } from "../version.js";
import { reportError, usageError } from "./output.js";

export async function runCorpusCli(argv: string[]): Promise<number> {
  const program = new Command("svc-corpus")
    .description("Starter corpus presets")
    .version(SVC_VERSION, "-V, --version")
    .exitOverride();
  program
    .command("init")
    .description(
      "Materialise a starter preset into a directory, or list the presets (from config corpusPresetPackages)",
    )
    .argument("[slug]", "the preset to materialise")
    .option("--list", "list the presets of every package in corpusPresetPackages")
    .option("--dir <path>", "target directory (default: the current directory)")
    .option("--force", "overwrite files that already exist")
    .option("--json", "machine-readable output")
    .action(
      async (slug: string | undefined, opts: { list?: boolean; dir?: string; force?: boolean; json?: boolean }) => {
        if (!opts.list && !slug) throw usageError("svc-corpus init needs a preset slug, or --list to see them");
        if (opts.list && slug) throw usageError("give either a slug or --list, not both");
        const { corpusInit, corpusList } = await import("../corpus/commands.js");
        if (opts.list) await corpusList(opts.json === true);
        else
          await corpusInit(slug!, {
            dir: opts.dir ?? process.cwd(),
            force: opts.force === true,
            json: opts.json === true,
          });
      },
    );
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError)
      return err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help"
        ? 0
        : 2;
    return reportError(err);
  }
}
