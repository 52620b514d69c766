/**
 * Creating a worktree: the real `git worktree add`, a cheap step that is never queued. A slug
 * whose tree already exists for the same repository is reused (the work continues where it was);
 * a branch `svc/<slug>` that exists without a tree (an archived tree) is checked out again. A new
 * tree gets svc's marker (marker.ts) before its record is written, so what the record names can
 * always be told apart from a folder put at that path later.
 */
import { realpath, stat } from "node:fs/promises";
import { SvcError } from "../errors.js";
import { branchExists, findRepo, git, headCommit, type RepoInfo } from "./git.js";
import { branchFor, worktreePath } from "./layout.js";
import { excludeMarker, writeMarker } from "./marker.js";
import type { WorktreeRecords } from "./records.js";

/** A session's worktree as its descriptor shows it. */
export interface WorktreeInfo {
  path: string;
  branch: string;
  /** The main checkout. */
  repo: string;
  slug: string;
  baseCommit: string;
}

export interface AddWorktreeInput {
  repo: RepoInfo;
  root: string;
  slug: string;
  records: WorktreeRecords;
  sessionId: string;
  now: number;
  /** The new tree's marker id: 32 random hex digits. */
  markerId: string;
  /** Told of what went wrong on the side: the marker could not be written, or a damaged records file was set aside. */
  warn?(message: string, fields: Record<string, string>): void;
}

export async function addWorktree(input: AddWorktreeInput): Promise<{ info: WorktreeInfo; reused: boolean }> {
  const { repo, root, slug, records } = input;
  const path = worktreePath(root, repo.repoName, slug);
  const branch = branchFor(slug);
  if (await stat(path).catch(() => undefined)) {
    const there = await findRepo(path);
    if (!there || there.repo !== repo.repo || there.top !== (await realpath(path))) {
      throw new SvcError(
        "conflict",
        `${path} exists and is not a worktree of ${repo.repo}; choose another slug or remove it`,
      );
    }
    const known = await records.find(path);
    const baseCommit = known?.baseCommit ?? (await headCommit(path)) ?? "";
    return { info: { path, branch: known?.branch ?? branch, repo: repo.repo, slug, baseCommit }, reused: true };
  }
  let baseCommit: string | undefined;
  let added = false;
  if (repo.head) {
    added = await git(["worktree", "add", "-b", branch, path, repo.head], repo.repo).then(
      () => true,
      (err: Error) => {
        if (/branch named .* already exists/.test(err.message)) return false;
        throw err;
      },
    );
    if (added) baseCommit = repo.head;
  }
  if (baseCommit === undefined) {
    if (!(await branchExists(repo.repo, branch)))
      throw new SvcError(
        "invalid_input",
        `${repo.top} has no commits yet; a worktree branches from a commit (make a first commit)`,
      );
    // An archived (or hand-made) svc/<slug> branch: checked out again, the work included.
    baseCommit = (await git(["rev-parse", `refs/heads/${branch}`], repo.repo)).trim();
    await git(["worktree", "add", path, branch], repo.repo);
  }
  const info = { path, branch, repo: repo.repo, slug, baseCommit };
  // Excluded first: a marker git could see would show in `git status` and be committed by `git add -A`.
  const marked = await excludeMarker(repo.commonDir)
    .then(() => writeMarker(path, input.markerId, input.now))
    .then(
      () => true,
      (err: Error) => {
        input.warn?.("could not mark the new worktree; svc can reclaim it only while git lists it", {
          path,
          error: err.message,
        });
        return false;
      },
    );
  const { setAside } = await records.put({
    ...info,
    repoName: repo.repoName,
    root,
    createdAt: input.now,
    sessionId: input.sessionId,
    branchCreated: added,
    ...(marked ? { marker: input.markerId } : {}),
  });
  if (setAside)
    input.warn?.("worktrees.json was damaged (not JSON) and was set aside; the trees it named are left alone", {
      setAside,
    });
  return { info, reused: false };
}
