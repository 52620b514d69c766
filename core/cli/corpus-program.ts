import { Command, CommanderError } from "commander";
import { SVC_VERSION } from "../version.js";
import { reportError } from "./output.js";

export async function runCorpusCli(argv: string[]): Promise<number> {
  const program = new Command("corpus").description("Starter corpus presets").version(SVC_VERSION, "-V, --version").exitOverride();
  try {
    await program.parseAsync(argv, { from: "user" });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.code === "commander.helpDisplayed" || err.code === "commander.version" ? 0 : 2;
    return reportError(err);
  }
}
