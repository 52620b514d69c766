import type { Command } from "commander";
import { RUN_TIMEOUT_FLAG, SINCE_FLAG, durationHelp, timeHelp } from "../duration-flags.js";

const collect = (v: string, prev: string[] = []) => [...prev, v];

function startOptions(cmd: Command): Command {
  return cmd
    .requiredOption(
      "--adapter <slug>",
      "adapter slug: an @svc/adapter-<slug> package, an acpAgents key, or a catalog agent (see `svc acp ls`)",
    )
    .option("--cwd <dir>", "working directory (relative to this cwd); default this cwd")
    .option("--prompt <text>", "first prompt")
    .option("--label <label>", "label shown in listings")
    .option("--option <k=v>", "spawn option over the config defaults (repeatable)", collect)
    .option("--skill <skill>", "skill (repeatable; replaces the defaults' skills)", collect)
    .option(
      "--worktree [slug]",
      "run in a git worktree <root>/<repo>/<slug> on branch svc/<slug> (no slug: an automatic one)",
    )
    .option("--root <dir>", "create the worktree under this directory (over SVC_WORKTREES_ROOT and worktrees.root)")
    .option("--attach", "nest under the calling session even when spawn.attach is on-request")
    .option("--no-attach", "do not nest under the calling session")
    .option("--no-dedupe", "derive no idempotency key for this spawn")
    .option("--idempotency-key <key>", "a second spawn with this key returns the live session holding it")
    .option("--trace", "trace this session to the OTLP endpoint (over defaults.extTracing; docs/tracing.md)")
    .option("--no-trace", "do not trace this session")
    .option("--json", "machine-readable output");
}

/** `svc sessions start|run|list|show|follow|judge|prompt|stop|resume|export|terminal`. */
export function registerSessions(program: Command): void {
  const sessions = program.command("sessions").description("Agent and terminal sessions run by the daemon");
  startOptions(sessions.command("start").description("Start an agent session (config defaults merged)")).action(
    async (opts) => {
      const { sessionsStart } = await import("../sessions/verbs.js");
      await sessionsStart(opts);
    },
  );
  startOptions(
    sessions
      .command("run")
      .description("Start a session, prompt it, wait for the turn to end, print the result, stop it"),
  )
    .option("--keep", "leave the session running afterwards")
    .option("--timeout <duration>", durationHelp("how long to wait for the turn", RUN_TIMEOUT_FLAG), "600")
    .action(async (opts) => {
      const { sessionsRun } = await import("../sessions/verbs.js");
      await sessionsRun(opts);
    });
  sessions
    .command("list")
    .alias("ls")
    .description("List sessions: state, activity (running, attention, quiet), pending prompts")
    .option("--json", "machine-readable output")
    .action(async (opts: { json?: boolean }) => {
      const { sessionsList } = await import("../sessions/verbs.js");
      await sessionsList(opts.json === true);
    });
  sessions
    .command("prompt")
    .description("Prompt a session: queued behind an in-flight turn, or interrupting it")
    .argument("<id>")
    .argument("<text>")
    .option("--interrupt", "cancel the in-flight turn and run this prompt now")
    .option("--no-interrupt", "queue even when defaults.agentPromptInterrupt is true")
    .option("--wait", "wait for the turn to end and print its result")
    .option("--json", "machine-readable output")
    .action(async (id: string, text: string, opts: { interrupt?: boolean; wait?: boolean; json?: boolean }) => {
      const { sessionsPrompt } = await import("../sessions/verbs.js");
      await sessionsPrompt(id, text, opts);
    });
  sessions
    .command("show")
    .description("Show one session: state, activity, turns, the steward's latest verdict")
    .argument("<id>")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const { sessionsShow } = await import("../sessions/verbs.js");
      await sessionsShow(id, opts.json === true);
    });
  sessions
    .command("follow")
    .description(
      "Print a session's transcript as readable lines, then each entry as it is written, until the session ends or Ctrl-C",
    )
    .argument("<id>")
    .option("--json", "the transcript's entries as they are, one JSON object per line")
    .option("--since <time>", timeHelp("only entries written since then", SINCE_FLAG))
    .option("--after <seq>", "only entries after this transcript seq (a --json line's seq)")
    .action(async (id: string, opts: { json?: boolean; since?: string; after?: string }) => {
      const { sessionsFollow } = await import("../sessions/follow.js");
      await sessionsFollow(id, opts);
    });
  sessions
    .command("judge")
    .description(
      "Ask the session steward's judge now how a session is doing (needs extJudge.apiKey or EXT_JUDGE_API_KEY); prints the verdict",
    )
    .argument("<id>")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const { sessionsJudge } = await import("../sessions/verbs.js");
      await sessionsJudge(id, opts.json === true);
    });
  sessions
    .command("stop")
    .description("Stop a session and its process")
    .argument("<id>")
    .action(async (id: string) => {
      const { sessionsStop } = await import("../sessions/verbs.js");
      await sessionsStop(id);
    });
  sessions
    .command("resume")
    .description(
      "Resume an ended session (also after a daemon restart) under its id: its agent loads its conversation again",
    )
    .argument("<id>")
    .option("--json", "machine-readable output")
    .action(async (id: string, opts: { json?: boolean }) => {
      const { sessionsResume } = await import("../sessions/verbs.js");
      await sessionsResume(id, opts);
    });
  sessions
    .command("export")
    .description("Print a session's descriptor and transcript as JSON")
    .argument("<id>")
    .action(async (id: string) => {
      const { sessionsExport } = await import("../sessions/verbs.js");
      await sessionsExport(id);
    });
  sessions
    .command("terminal")
    .description(
      "Start a terminal session from a local terminalPresets entry, or run `-- <argv...>`; output goes to terminal.jsonl",
    )
    .argument("[argv...]", "the command, after `--`")
    .option("--preset <name>", "a terminalPresets entry")
    .option(
      "--root <dir>",
      "where a worktree for it is created, under worktrees.isolation always (over SVC_WORKTREES_ROOT and worktrees.root)",
    )
    .option("--cwd <dir>", "working directory (relative to this cwd)")
    .option("--label <label>", "label shown in listings")
    .option("--name <name>", "stable session name")
    .option("--json", "machine-readable output")
    .action(
      async (
        argv: string[],
        opts: { preset?: string; cwd?: string; label?: string; name?: string; json?: boolean },
      ) => {
        const { sessionsTerminal } = await import("../sessions/verbs.js");
        await sessionsTerminal(argv, opts);
      },
    );
}
