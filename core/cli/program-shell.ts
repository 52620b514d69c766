/**
 * The commander program's shell and runner, shared by the full program (program.ts, every verb
 * group) and the daemon's (serve-program.ts, `svc serve` and `svc start` only).
 */
import { Command, CommanderError } from "commander";
import { SVC_VERSION } from "../version.js";
import { reportError } from "./output.js";
import { SvcError } from "../errors.js";

/** Verb groups whose work is requests to the daemon, so `--remote` can send them through a pairing. */
const REMOTE_GROUPS = ["sentinel", "sessions", "webhooks"];

/** The program without its verbs: name, version, error output and the global `--remote` option. */
export function programShell(options: { jsonErrors?: boolean } = {}): Command {
  const program = new Command("svc")
    .description("Local agent daemon and CLI: plugin host, sentinels, signed webhooks, agent sessions")
    .version(SVC_VERSION, "-V, --version")
    .showHelpAfterError(options.jsonErrors ? false : "(run with --help for usage)")
    .exitOverride()
    .configureOutput({
      writeErr: (s) => process.stderr.write(s),
      // With --json, a usage error is printed once, as JSON, by runCli.
      outputError: (s, write) => (options.jsonErrors ? undefined : write(s)),
    })
    .option(
      "--remote <pairing>",
      "run the verb against a paired daemon, through the pairing's encrypted link (see `svc pair ls`)",
    )
    .hook("preAction", async (cmd, action) => {
      const remote = (cmd.opts() as { remote?: string }).remote;
      if (remote === undefined) return;
      let top = action;
      while (top.parent && top.parent !== cmd) top = top.parent;
      if (!REMOTE_GROUPS.includes(top.name())) {
        throw new SvcError(
          "usage",
          `--remote runs daemon verbs (${REMOTE_GROUPS.join(", ")}) on a paired daemon; \`svc ${top.name()}\` works on this machine only`,
        );
      }
      const { useRemotePairing } = await import("./daemon-client.js");
      useRemotePairing(remote);
    });
  return program;
}

/** Runs `argv` through the program `build` makes; returns the exit code (0 success, 1 failure, 2 usage error). */
export async function runProgram(argv: string[], build: (jsonErrors: boolean) => Command): Promise<number> {
  // A verb run with --json reports its errors as JSON too (`{"error": {code, message, details?}}` on stdout).
  const json = argv.includes("--json");
  const program = build(json);
  // `svc` alone asks what there is: its help on stdout, exit 0 (as gh does), not a usage error on stderr.
  if (argv.length === 0) {
    process.stdout.write(program.helpInformation());
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: "user" });
    return typeof process.exitCode === "number" ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version" || err.code === "commander.help")
        return 0;
      if (err.code === "commander.executeSubCommandAsync") return err.exitCode;
      return json ? reportError(new SvcError("usage", err.message.replace(/^error: /, "")), { json }) : 2;
    }
    return reportError(err, { json });
  }
}
