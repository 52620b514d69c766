/**
 * Reclaiming worktrees (`svc worktree rm|archive|gc`). A tree is never removed when its session
 * ends; these are the ways back. Each acts only on a tree ownership.ts says is svc's; anything
 * else is refused (rm, archive) or reported as left (gc), `--force` or not.
 * - rm: removes the tree with `git worktree remove`; refuses a dirty tree or one a live session
 *   uses unless forced, and a tree git no longer lists (svc cannot tell whether it holds work)
 *   unless forced. Its branch is deleted only when svc made it for this tree and it holds no
 *   commit beyond its base (an archived branch checked out again is never deleted).
 * - archive: commits whatever is uncommitted (untracked files included) on the tree's branch,
 *   then removes the tree; the branch keeps the work (`svc sessions start --worktree <slug>` or
 *   `git worktree add <path> svc/<slug>` brings it back).
 * - gc: drops the records of vanished trees (and git's entries for them), and removes svc's
 *   trees in which nothing changed for `--older-than`: clean ones git lists, and orphans git no
 *   longer lists whose marker vouches for them. Everything else it reports as left, with why.
 */
import { rm as rmPath } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { SvcError } from "../errors.js";
import { git, gitMaybe, isDirty, listGitWorktrees } from "./git.js";
import { lastChange, type TreeRow } from "./inventory.js";
import { branchFor } from "./layout.js";
import { GitListings, ownership, realOrSame } from "./ownership.js";
import { recordOf, WorktreeRecords } from "./records.js";

export interface Removal {
  path: string;
  slug: string;
  branch?: string;
  /** The branch was deleted (it held no commit beyond its base). */
  branchDeleted?: boolean;
}

/** The rows `target` (a path, absolute or relative to `cwd`, or a slug) names; a slug in two repositories is ambiguous. */
export function pick(rows: TreeRow[], target: string, cwd = process.cwd()): TreeRow {
  const abs = resolve(cwd, target);
  const byPath = rows.find((r) => r.path === target || r.path === abs);
  if (byPath) return byPath;
  const bySlug = rows.filter((r) => r.slug === target);
  if (bySlug.length === 1) return bySlug[0]!;
  if (bySlug.length > 1)
    throw new SvcError(
      "invalid_input",
      `slug ${target} names ${bySlug.length} worktrees: ${bySlug.map((r) => r.path).join(", ")}; give the path`,
    );
  throw new SvcError("not_found", `no worktree ${JSON.stringify(target)}; list them with \`svc worktree ls\``);
}

function notSvcs(row: TreeRow): SvcError {
  return new SvcError(
    "conflict",
    `${row.path} is not svc's: ${row.notOwned ?? "svc did not make it"}. svc only removes worktrees it made, --force or not; remove it yourself if you mean to`,
  );
}

function refuse(row: TreeRow, force: boolean, verb: "rm" | "archive"): void {
  if (!row.owned) throw notSvcs(row);
  if (force) return;
  if (row.state === "live")
    throw new SvcError(
      "conflict",
      `worktree ${row.slug} is in use by live session ${row.session}; stop the session first or pass --force`,
    );
  if (verb === "rm" && row.ownedBy === "marker")
    throw new SvcError(
      "conflict",
      `git no longer lists ${row.path} as a worktree, so svc cannot tell whether it holds uncommitted work; look inside, then pass --force to remove it`,
    );
  if (verb === "rm" && row.dirty)
    throw new SvcError(
      "conflict",
      `worktree ${row.slug} has uncommitted changes; \`svc worktree archive ${row.slug}\` keeps them, --force discards them`,
    );
}

/** git's entry for a tree svc made whose directory is gone or is no longer the tree: listed as prunable, on the recorded branch. */
async function staleGitEntry(row: TreeRow): Promise<string | undefined> {
  if (!row.repo || !row.branch) return undefined;
  const realParent = await realOrSame(dirname(row.path));
  const candidates = new Set([row.path, join(realParent, basename(row.path))]);
  const entry = (await listGitWorktrees(row.repo)).slice(1).find((w) => candidates.has(w.path));
  return entry?.prunable && entry.branch === row.branch ? entry.path : undefined;
}

/**
 * Drops git's entry for a tree svc made whose directory is gone (`git worktree remove` of a
 * missing tree touches nothing else; never `git worktree prune`, which drops other people's
 * entries too). Undefined when there was none; false when git kept it (the path holds something else).
 */
async function dropGitEntry(row: TreeRow): Promise<boolean | undefined> {
  const entry = await staleGitEntry(row);
  if (!entry) return undefined;
  return (await gitMaybe(["worktree", "remove", entry], row.repo!)) !== undefined;
}

export async function removeTree(home: string, row: TreeRow, opts: { force: boolean }): Promise<Removal> {
  if (row.state === "missing") {
    if (row.integrity === "damaged") throw notSvcs({ ...row, notOwned: "its record in worktrees.json is damaged" });
    await dropGitEntry(row);
    await new WorktreeRecords(home).remove([row.path]);
    return { path: row.path, slug: row.slug, ...(row.branch ? { branch: row.branch } : {}), branchDeleted: false };
  }
  refuse(row, opts.force, "rm");
  return deleteTree(home, row, opts.force);
}

/** Deletes a tree of svc's once the caller's own rules let it: git removes what it lists; svc removes an orphan after asking ownership again. */
async function deleteTree(home: string, row: TreeRow, force: boolean): Promise<Removal> {
  if (!row.owned) throw notSvcs(row);
  if (row.ownedBy === "git") {
    await git(["worktree", "remove", ...(force ? ["--force", "--force"] : []), row.path], row.repo!);
  } else {
    await recheck(home, row);
    await rmPath(row.path, { recursive: true, force: true });
    await dropGitEntry(row);
  }
  let branchDeleted = false;
  // Only a branch in svc's own namespace, made for this tree, whose tip is still its base: no commit can be lost.
  if (row.repo && row.branch === branchFor(row.slug) && row.baseCommit && row.branchCreated) {
    const tip = (await gitMaybe(["rev-parse", "--verify", "-q", `refs/heads/${row.branch}`], row.repo))?.trim();
    if (tip === row.baseCommit) branchDeleted = (await gitMaybe(["branch", "-D", row.branch], row.repo)) !== undefined;
  }
  await new WorktreeRecords(home).remove([row.path]);
  return { path: row.path, slug: row.slug, ...(row.branch ? { branch: row.branch } : {}), branchDeleted };
}

/** Asks ownership.ts again, from the records file as it is now, right before svc deletes a directory itself. */
async function recheck(home: string, row: TreeRow): Promise<void> {
  const { records } = await new WorktreeRecords(home).read();
  const own = await ownership(row.path, recordOf(records, row.path), new GitListings());
  if (!own.svcs || own.how !== "marker") throw notSvcs({ ...row, notOwned: own.svcs ? "git lists it again" : own.why });
}

export interface Archived extends Removal {
  /** The commit holding the uncommitted work, when there was any. */
  commit?: string;
  restore: string;
}

export async function archiveTree(home: string, row: TreeRow, opts: { force: boolean }): Promise<Archived> {
  if (row.state === "missing")
    throw new SvcError(
      "conflict",
      `worktree ${row.slug} is missing: there is no tree to archive; \`svc worktree gc\` cleans up its record`,
    );
  refuse(row, opts.force, "archive");
  if (row.ownedBy !== "git" || !row.repo || !row.branch) {
    throw new SvcError(
      "conflict",
      `git no longer lists ${row.path} as a worktree: there is no branch to archive it on; \`svc worktree rm --force\` removes it once you have looked inside`,
    );
  }
  let commit: string | undefined;
  if (await isDirty(row.path)) {
    await git(["add", "-A"], row.path);
    const identity = (await gitMaybe(["config", "user.email"], row.path))?.trim()
      ? []
      : ["-c", "user.name=svc", "-c", "user.email=svc@localhost"];
    await git(
      [...identity, "commit", "--no-verify", "-q", "-m", `svc archive: uncommitted work of worktree ${row.slug}`],
      row.path,
    );
    commit = (await git(["rev-parse", "HEAD"], row.path)).trim();
  }
  await git(["worktree", "remove", row.path], row.repo);
  await new WorktreeRecords(home).remove([row.path]);
  return {
    path: row.path,
    slug: row.slug,
    branch: row.branch,
    branchDeleted: false,
    ...(commit ? { commit } : {}),
    restore: `svc sessions start --worktree ${row.slug} … (from inside ${row.repo}), or: git -C ${row.repo} worktree add ${row.path} ${row.branch}`,
  };
}

export interface GcAction {
  path: string;
  slug: string;
  state: TreeRow["state"];
  /** `removed`: the tree is gone; `record-dropped`: only svc's record (and git's entry) went, no file; `left`: nothing touched. */
  action: "removed" | "record-dropped" | "left";
  reason: string;
  /** The removal was planned but failed (the reason says why); nothing of the tree was lost. */
  failed?: true;
}

export interface GcResult {
  actions: GcAction[];
  /** Trees whose entries svc dropped from git's list of worktrees. */
  pruned: string[];
}

export function formatAge(ms: number): string {
  const m = Math.max(0, Math.round(ms / 60_000));
  if (m < 60) return `${m}m`;
  if (m < 48 * 60) return `${Math.round(m / 60)}h`;
  return `${Math.round(m / 1440)}d`;
}

/** What gc does with one row, and why; `remove` and `drop` are only plans until run. */
async function decide(
  row: TreeRow,
  olderThanMs: number,
  now: number,
): Promise<{ action: GcAction["action"]; reason: string }> {
  if (row.state === "missing") {
    if (row.integrity === "damaged")
      return {
        action: "left",
        reason: "its directory is gone, but its record is damaged; svc leaves damaged records for you to see",
      };
    return { action: "record-dropped", reason: "its directory is gone" };
  }
  if (!row.owned) {
    if (row.recorded && row.integrity !== "damaged")
      return {
        action: "record-dropped",
        reason: `the folder there is not svc's (${row.notOwned}); the folder is left as it is`,
      };
    return { action: "left", reason: `not svc's: ${row.notOwned ?? "svc did not make it"}` };
  }
  if (row.state === "live") return { action: "left", reason: `in use by live session ${row.session}` };
  if (row.checkout)
    return {
      action: "left",
      reason: "git no longer lists it, but it is a git checkout of its own; `svc worktree rm --force` removes it",
    };
  if (row.ownedBy === "git" && row.dirty !== false) {
    return {
      action: "left",
      reason: row.dirty
        ? `uncommitted changes: \`svc worktree archive ${row.slug}\` keeps them, \`svc worktree rm --force\` discards them`
        : "git could not say whether it has uncommitted changes",
    };
  }
  const quiet = now - Math.max(row.createdAt ?? 0, await lastChange(row.path));
  if (quiet < olderThanMs)
    return { action: "left", reason: `something in it changed ${formatAge(quiet)} ago, within --older-than` };
  const why = row.ownedBy === "git" ? "clean" : "git no longer lists it and svc's marker is in it";
  return { action: "removed", reason: `${why}; nothing in it changed for ${formatAge(quiet)}` };
}

export async function gc(
  home: string,
  rows: TreeRow[],
  opts: { olderThanMs: number; dryRun: boolean; now?: number },
): Promise<GcResult> {
  const now = opts.now ?? Date.now();
  const records = new WorktreeRecords(home);
  const actions: GcAction[] = [];
  const pruned: string[] = [];
  for (const row of rows) {
    const plan = await decide(row, opts.olderThanMs, now);
    const action: GcAction = { path: row.path, slug: row.slug, state: row.state, ...plan };
    actions.push(action);
    if (opts.dryRun || action.action === "left") continue;
    try {
      if (action.action === "record-dropped") {
        const dropped = await dropGitEntry(row);
        if (dropped) pruned.push(row.path);
        if (dropped === false)
          action.reason += `; git keeps a stale entry for it (\`git -C ${row.repo} worktree prune\` drops it)`;
        await records.remove([row.path]);
      } else {
        await deleteTree(home, row, false);
      }
    } catch (err) {
      Object.assign(action, {
        action: "left",
        failed: true,
        reason: `${action.reason}, but it could not be ${action.action === "removed" ? "removed" : "dropped"}: ${(err as Error).message}`,
      });
    }
  }
  return { actions, pruned };
}
