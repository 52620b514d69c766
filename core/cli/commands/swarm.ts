import type { Command } from "commander";

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `svc run-swarm <file> | ls | show <runId>`: swarm files of agent steps, run by the daemon. */
export function registerSwarm(program: Command): void {
  const cmd = program
    .command("run-swarm")
    .description(
      "Run a swarm file's agent steps in dependency order (docs/swarm.md); `ls` lists runs, `show <runId>` shows one",
    )
    .argument("<file>", "the swarm file (svc/swarm/v1, JSON)")
    .option("--model <role=id>", "the run's model for a role, highest precedence (repeatable)", collect)
    .option("--concurrency <n>", "at most n steps at once (default the file's, else 4)")
    .option(
      "--root <dir>",
      "create the steps' worktrees under this directory (over SVC_WORKTREES_ROOT and worktrees.root)",
    )
    .option("--dry-run", "print the resolved plan (models with sources, adapters, cwd, order) and start nothing")
    .option("--attach", "nest the steps under the calling session even when spawn.attach is on-request")
    .option("--no-attach", "do not nest the steps under the calling session")
    .option("--json", "machine-readable output")
    .action(
      async (
        file: string,
        opts: {
          model?: string[];
          concurrency?: string;
          root?: string;
          dryRun?: boolean;
          attach?: boolean;
          json?: boolean;
        },
      ) => {
        const { runSwarm } = await import("../swarm/verbs.js");
        await runSwarm(file, opts);
      },
    );
  cmd
    .command("ls")
    .alias("list")
    .description("List runs, newest first, with their step counts")
    .option("--json", "machine-readable output")
    .action(async (_opts: unknown, command: Command) => {
      const { runSwarmLs } = await import("../swarm/verbs.js");
      // --json is also the parent's option; commander gives it to whichever it parses first.
      await runSwarmLs(command.optsWithGlobals().json === true);
    });
  cmd
    .command("show")
    .description("Show a run: its plan with sources and each step's state, session, timing and output")
    .argument("<runId>")
    .option("--json", "machine-readable output")
    .action(async (runId: string, _opts: unknown, command: Command) => {
      const { runSwarmShow } = await import("../swarm/verbs.js");
      await runSwarmShow(runId, command.optsWithGlobals().json === true);
    });
}
