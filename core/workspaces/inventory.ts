/**
 * Every worktree svc knows or finds: the records in `$SVC_HOME/worktrees.json`, plus any
 * `<root>/<repoName>/<slug>` directory under a root with no record. State:
 * - `live`: a live session of the running daemon uses it;
 * - `idle`: recorded, on disk, registered with git, no live session;
 * - `orphaned`: on disk but git does not list it as a worktree (or svc has no record of it);
 *   `checkout` when it is still a git checkout of its own (which `gc` never removes);
 * - `missing`: recorded, but its directory is gone.
 */
import { lstat, readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { findRepo, isDirty, listGitWorktrees } from "./git.js";
import { WorktreeRecords, type WorktreeRecord } from "./records.js";

export type TreeState = "live" | "idle" | "orphaned" | "missing";

export interface TreeRow {
  path: string;
  repo?: string;
  repoName: string;
  slug: string;
  branch?: string;
  baseCommit?: string;
  session?: string;
  state: TreeState;
  dirty?: boolean;
  ageMs: number;
  sizeBytes?: number;
  createdAt?: number;
  provisioning?: WorktreeRecord["provisioning"];
  recorded: boolean;
  /** svc made the branch (see WorktreeRecord.branchCreated). */
  branchCreated?: boolean;
  /** An orphaned directory that is nonetheless a git checkout of its own (a clone, or another repository's worktree): never collected. */
  checkout?: boolean;
}

export interface InventoryInput {
  home: string;
  /** Roots to scan for unrecorded trees (the resolved root; records add their own). */
  roots: string[];
  /** Worktree path → live session using it (from the running daemon; empty without one). */
  live: Map<string, string>;
  now: number;
  /** Compute sizes (a walk of every tree). */
  sizes?: boolean;
}

export async function inventory(input: InventoryInput): Promise<TreeRow[]> {
  const records = await new WorktreeRecords(input.home).list();
  const rows: TreeRow[] = [];
  const known = new Map<string, Set<string>>();
  const gitPaths = async (repo: string) => {
    if (!known.has(repo)) known.set(repo, new Set((await listGitWorktrees(repo)).filter((w) => !w.prunable).map((w) => w.path)));
    return known.get(repo)!;
  };
  for (const r of records) {
    const onDisk = await stat(r.path).catch(() => undefined);
    const registered = onDisk ? (await gitPaths(r.repo)).has(r.path) : false;
    const session = input.live.get(r.path) ?? r.sessionId;
    const state: TreeState = !onDisk ? "missing" : input.live.has(r.path) ? "live" : registered ? "idle" : "orphaned";
    rows.push({
      path: r.path, repo: r.repo, repoName: r.repoName, slug: r.slug, branch: r.branch, baseCommit: r.baseCommit,
      ...(session ? { session } : {}), state,
      ...(registered ? { dirty: await isDirty(r.path).catch(() => undefined) } : {}),
      ageMs: input.now - r.createdAt, createdAt: r.createdAt,
      ...(r.provisioning ? { provisioning: r.provisioning } : {}),
      ...(onDisk && input.sizes !== false ? { sizeBytes: await sizeOf(r.path) } : {}),
      recorded: true,
      ...(r.branchCreated ? { branchCreated: true } : {}),
      ...(onDisk && !registered && (await isCheckout(r.path)) ? { checkout: true, dirty: await isDirty(r.path).catch(() => undefined) } : {}),
    });
  }
  const roots = new Set([...input.roots, ...records.map((r) => r.root)]);
  const recorded = new Set(records.map((r) => r.path));
  for (const root of roots) {
    for (const repoName of await dirs(root)) {
      for (const slug of await dirs(join(root, repoName))) {
        const path = join(root, repoName, slug);
        if (recorded.has(path)) continue;
        const s = await stat(path);
        const checkout = await isCheckout(path);
        rows.push({
          path, repoName, slug, state: input.live.has(path) ? "live" : "orphaned", ageMs: input.now - s.mtimeMs,
          ...(input.sizes !== false ? { sizeBytes: await sizeOf(path) } : {}), recorded: false,
          ...(checkout ? { checkout: true, dirty: await isDirty(path).catch(() => undefined) } : {}),
        });
      }
    }
  }
  return rows.sort((a, b) => a.path.localeCompare(b.path));
}

/** Whether `path` is the top of a working git checkout (its `.git` leads to a repository git can read). */
async function isCheckout(path: string): Promise<boolean> {
  if (!(await lstat(join(path, ".git")).catch(() => undefined))) return false;
  return (await findRepo(path))?.top === path;
}

async function dirs(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith(".")).map((e) => e.name).sort();
}

/** Bytes of the regular files under `path` (symlinks not followed). */
export async function sizeOf(path: string): Promise<number> {
  let total = 0;
  const walk = async (p: string): Promise<void> => {
    const s = await lstat(p).catch(() => undefined);
    if (!s) return;
    if (s.isDirectory()) {
      for (const name of await readdir(p).catch(() => [] as string[])) await walk(join(p, name));
    } else if (s.isFile()) total += s.size;
  };
  await walk(path);
  return total;
}
