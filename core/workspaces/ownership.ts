/**
 * The one rule for what `svc worktree rm|archive|gc` may delete. A directory is svc's only when
 * svc's own record names it and either
 * - git lists it as a linked worktree of the recorded repository (and the tree agrees: its `.git`
 *   leads back to that repository), or
 * - git no longer lists it, but it still carries the marker svc wrote inside it at creation, with
 *   the id of that record, at the recorded path; and the record's checksum holds.
 * Anything else (an unrecorded folder, a recorded path whose directory was replaced, a symbolic
 * link, a path named by a damaged or hand-edited record) is "not svc's" and is left, whatever
 * `--root` or `--force` says.
 */
import { lstat, realpath } from "node:fs/promises";
import { findRepo, listGitWorktrees } from "./git.js";
import { MARKER_FILE, readMarker } from "./marker.js";
import type { ReadRecord } from "./records.js";

export type Ownership =
  /** `listed`: git lists it as a worktree of the recorded repository; `marker`: git no longer does, svc's marker vouches for it. */
  { svcs: true; how: "listed" | "marker" } | { svcs: false; why: string };

/** `git worktree list` of each repository, asked once: the real paths of its linked, not prunable, worktrees. */
export class GitListings {
  private readonly cache = new Map<string, Promise<Set<string>>>();

  linked(repo: string): Promise<Set<string>> {
    let p = this.cache.get(repo);
    if (!p) {
      p = listGitWorktrees(repo).then(
        (all) =>
          new Set(
            all
              .slice(1)
              .filter((w) => !w.prunable)
              .map((w) => w.path),
          ),
      );
      this.cache.set(repo, p);
    }
    return p;
  }
}

/** The path with its symbolic links resolved, or as given when it cannot be (gone, unreadable). */
export const realOrSame = (p: string): Promise<string> => realpath(p).catch(() => p);

/**
 * Whether git vouches for `path` as a linked worktree of `repo`: git in `repo` lists it, and git
 * in `path` finds a linked worktree whose top is `path` and whose repository is `repo`.
 */
export async function gitVouches(path: string, repo: string, listings: GitListings): Promise<boolean> {
  const [realPath, realRepo] = await Promise.all([realOrSame(path), realOrSame(repo)]);
  if (!(await listings.linked(repo)).has(realPath)) return false;
  const there = await findRepo(path);
  return (
    there !== undefined &&
    there.top === realPath &&
    there.gitDir !== there.commonDir &&
    (await realOrSame(there.repo)) === realRepo
  );
}

/** Whether the directory at `path` (which exists) is a tree svc made and may reclaim; `rec` is its record, if any. */
export async function ownership(path: string, rec: ReadRecord | undefined, listings: GitListings): Promise<Ownership> {
  if (!rec) {
    const note =
      "marker" in (await readMarker(path))
        ? ` (it carries svc's ${MARKER_FILE} marker: svc was stopped between making it and recording it; \`git worktree remove\` it yourself)`
        : "";
    return { svcs: false, why: `svc has no record of it${note}` };
  }
  if (rec.integrity === "damaged")
    return { svcs: false, why: `its record in worktrees.json is damaged: ${rec.problem}` };
  const st = await lstat(path).catch(() => undefined);
  if (!st) return { svcs: false, why: "it is gone" };
  if (st.isSymbolicLink()) return { svcs: false, why: "it is a symbolic link, not the directory svc made" };
  if (!st.isDirectory()) return { svcs: false, why: "it is not a directory" };
  const { record } = rec;
  const marker = await readMarker(path);
  if ("marker" in marker && record.marker !== undefined && marker.marker.id !== record.marker) {
    return { svcs: false, why: `its ${MARKER_FILE} marker is another tree's, not the one svc recorded for this path` };
  }
  if (await gitVouches(path, record.repo, listings)) return { svcs: true, how: "listed" };
  const gone = `git does not list it as a worktree of ${record.repo}`;
  if ("missing" in marker)
    return {
      svcs: false,
      why: `${gone}, and it carries no svc marker (${marker.missing}): not the tree svc made, perhaps a folder put there since`,
    };
  if (rec.integrity !== "verified")
    return { svcs: false, why: `${gone}, and its record has no checksum to trust the marker by` };
  if (record.marker === undefined) return { svcs: false, why: `${gone}, and svc recorded no marker for it` };
  if (marker.marker.path !== record.path)
    return { svcs: false, why: `${gone}, and its marker names another path (${marker.marker.path})` };
  return { svcs: true, how: "marker" };
}
