/**
 * Reclaiming worktrees (`svc worktree rm|archive|gc`). A tree is never removed when its session
 * ends; these are the ways back.
 * - rm: removes the tree (`git worktree remove`); refuses a dirty tree or one a live session uses
 *   unless forced. Its branch is deleted only when svc made it for this tree and it holds no
 *   commit beyond its base (an archived branch checked out again is never deleted).
 * - archive: commits whatever is uncommitted (untracked files included) on the tree's branch,
 *   then removes the tree; the branch keeps the work (`svc sessions start --worktree <slug>` or
 *   `git worktree add <path> svc/<slug>` brings it back).
 * - gc: drops records of vanished trees, removes orphaned directories (never one that is still a
 *   git checkout, e.g. a clone or a worktree svc has no record of) and idle clean trees older
 *   than the threshold (dirty ones are reported, never removed), and runs `git worktree prune`.
 */
import { rm as rmPath } from "node:fs/promises";
import { resolve } from "node:path";
import { SvcError } from "../errors.js";
import { git, gitMaybe, isDirty } from "./git.js";
import type { TreeRow } from "./inventory.js";
import { WorktreeRecords } from "./records.js";

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
  if (bySlug.length > 1) throw new SvcError("invalid_input", `slug ${target} names ${bySlug.length} worktrees: ${bySlug.map((r) => r.path).join(", ")}; give the path`);
  throw new SvcError("not_found", `no worktree ${JSON.stringify(target)}; list them with \`svc worktree ls\``);
}

function refuse(row: TreeRow, force: boolean, verb: string): void {
  if (force) return;
  if (row.state === "live") throw new SvcError("conflict", `worktree ${row.slug} is in use by live session ${row.session}; stop the session first or pass --force`);
  if (row.checkout && !row.recorded) throw new SvcError("conflict", `${row.path} is a git checkout svc did not make; remove it yourself, or pass --force`);
  if (verb === "rm" && row.dirty) throw new SvcError("conflict", `worktree ${row.slug} has uncommitted changes; \`svc worktree archive ${row.slug}\` keeps them, --force discards them`);
}

export async function removeTree(home: string, row: TreeRow, opts: { force: boolean }): Promise<Removal> {
  refuse(row, opts.force, "rm");
  if (row.repo && row.state !== "missing") {
    const removed = await gitMaybe(["worktree", "remove", ...(opts.force ? ["--force", "--force"] : []), row.path], row.repo);
    if (removed === undefined && row.state !== "orphaned") await git(["worktree", "remove", "--force", row.path], row.repo);
  }
  await rmPath(row.path, { recursive: true, force: true });
  if (row.repo) await gitMaybe(["worktree", "prune"], row.repo);
  let branchDeleted = false;
  if (row.repo && row.branch && row.baseCommit && row.branchCreated) {
    const tip = (await gitMaybe(["rev-parse", "--verify", "-q", `refs/heads/${row.branch}`], row.repo))?.trim();
    if (tip === row.baseCommit) branchDeleted = (await gitMaybe(["branch", "-D", row.branch], row.repo)) !== undefined;
  }
  await new WorktreeRecords(home).remove([row.path]);
  return { path: row.path, slug: row.slug, ...(row.branch ? { branch: row.branch } : {}), branchDeleted };
}

export interface Archived extends Removal {
  /** The commit holding the uncommitted work, when there was any. */
  commit?: string;
  restore: string;
}

export async function archiveTree(home: string, row: TreeRow, opts: { force: boolean }): Promise<Archived> {
  refuse(row, opts.force, "archive");
  if (row.state === "missing" || row.state === "orphaned" || !row.repo || !row.branch) {
    throw new SvcError("conflict", `worktree ${row.slug} is ${row.state}: there is no tree to archive; \`svc worktree gc\` cleans it up`);
  }
  let commit: string | undefined;
  if (await isDirty(row.path)) {
    await git(["add", "-A"], row.path);
    const identity = (await gitMaybe(["config", "user.email"], row.path))?.trim() ? [] : ["-c", "user.name=svc", "-c", "user.email=svc@localhost"];
    await git([...identity, "commit", "--no-verify", "-q", "-m", `svc archive: uncommitted work of worktree ${row.slug}`], row.path);
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
  action: "removed" | "record-dropped" | "skipped";
  reason: string;
}

export async function gc(home: string, rows: TreeRow[], opts: { olderThanMs: number; dryRun: boolean }): Promise<{ actions: GcAction[]; pruned: string[] }> {
  const actions: GcAction[] = [];
  const records = new WorktreeRecords(home);
  for (const row of rows) {
    const base = { path: row.path, slug: row.slug, state: row.state };
    if (row.state === "live") continue;
    if (row.state === "missing") {
      actions.push({ ...base, action: "record-dropped", reason: "its directory is gone" });
      if (!opts.dryRun) await records.remove([row.path]);
      continue;
    }
    if (row.ageMs < opts.olderThanMs) continue;
    if (row.state === "orphaned" && row.checkout) {
      actions.push({ ...base, action: "skipped", reason: `a git checkout${row.recorded ? "" : " svc has no record of"}: \`svc worktree rm --force ${row.path}\` removes it` });
      continue;
    }
    if (row.state === "orphaned") {
      actions.push({ ...base, action: "removed", reason: row.recorded ? "git no longer lists it as a worktree" : "no svc record and not a worktree svc knows" });
      if (!opts.dryRun) {
        await rmPath(row.path, { recursive: true, force: true });
        await records.remove([row.path]);
      }
      continue;
    }
    if (row.dirty) {
      actions.push({ ...base, action: "skipped", reason: `uncommitted changes: \`svc worktree archive ${row.slug}\` keeps them, \`svc worktree rm --force\` discards them` });
      continue;
    }
    actions.push({ ...base, action: "removed", reason: "idle and clean, older than the threshold" });
    if (!opts.dryRun) await removeTree(home, row, { force: false });
  }
  const repos = [...new Set(rows.map((r) => r.repo).filter((r): r is string => Boolean(r)))];
  if (!opts.dryRun) for (const repo of repos) await gitMaybe(["worktree", "prune"], repo);
  return { actions, pruned: opts.dryRun ? [] : repos };
}

/** `30m`, `12h`, `7d`, `2w` (a bare number is days). */
export function parseAge(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(m|h|d|w)?$/.exec(text.trim());
  if (!m) throw new SvcError("usage", `--older-than ${JSON.stringify(text)} is invalid: use a number with m, h, d or w (e.g. 12h, 7d)`);
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[(m[2] ?? "d") as "m" | "h" | "d" | "w"];
  return Number(m[1]) * unit;
}
