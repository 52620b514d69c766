import type { Command } from "commander";
import { OLDER_THAN_FLAG, durationHelp } from "../duration-flags.js";

/** `svc worktree ls|rm|archive|gc`: the agents' git worktrees (docs/workspaces.md). */
export function registerWorktree(program: Command): void {
  const wt = program.command("worktree").description("Git worktrees made for agent sessions: list and reclaim them");
  wt.command("ls")
    .alias("list")
    .description(
      "List worktrees: repo, slug, branch, session, state (live, idle, orphaned, missing, foreign), dirty or clean, age, size",
    )
    .option("--root <dir>", "also scan this root (over SVC_WORKTREES_ROOT and worktrees.root)")
    .option("--json", "machine-readable output")
    .action(async (opts: { root?: string; json?: boolean }) => {
      const { worktreeLs } = await import("../worktree/verbs.js");
      await worktreeLs(opts);
    });
  wt.command("rm")
    .description(
      "Remove a worktree svc made (refuses a dirty one, one a live session uses or one git no longer lists, unless --force; never one svc did not make)",
    )
    .argument("<slug|path>")
    .option("--force", "remove even when dirty, in use, or no longer listed by git")
    .option("--json", "machine-readable output")
    .action(async (target: string, opts: { force?: boolean; json?: boolean }) => {
      const { worktreeRm } = await import("../worktree/verbs.js");
      await worktreeRm(target, opts);
    });
  wt.command("archive")
    .description("Commit a worktree's uncommitted work on its branch, then remove the tree (the branch keeps the work)")
    .argument("<slug|path>")
    .option("--force", "archive even when a live session uses it")
    .option("--json", "machine-readable output")
    .action(async (target: string, opts: { force?: boolean; json?: boolean }) => {
      const { worktreeArchive } = await import("../worktree/verbs.js");
      await worktreeArchive(target, opts);
    });
  wt.command("gc")
    .description(
      "Remove svc's own trees in which nothing changed for --older-than (clean, or orphaned with svc's marker); drop records of vanished trees; leave everything else, and say why",
    )
    .option("--older-than <duration>", durationHelp("how long nothing in a tree changed", OLDER_THAN_FLAG), "7d")
    .option("--dry-run", "only say what would be removed, dropped and left, and why")
    .option("--root <dir>", "also scan this root")
    .option("--json", "machine-readable output")
    .action(async (opts: { olderThan: string; dryRun?: boolean; root?: string; json?: boolean }) => {
      const { worktreeGc } = await import("../worktree/verbs.js");
      await worktreeGc(opts);
    });
}
