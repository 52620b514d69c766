/**
 * Every worktree svc knows or finds: the records in `$SVC_HOME/worktrees.json`, plus any
 * `<root>/<repoName>/<slug>` directory under a root with no record. Whether a directory is svc's
 * to reclaim is decided by ownership.ts alone. State:
 * - `live`: a live session of the running daemon uses it;
 * - `idle`: svc's, and git lists it as a worktree; no live session;
 * - `orphaned`: svc's (its marker vouches for it), but git no longer lists it; `checkout` when it
 *   is nonetheless a git checkout of its own (which `gc` never removes);
 * - `missing`: recorded, but its directory is gone;
 * - `foreign`: on disk but not svc's (no record, a damaged record, or not the tree svc made):
 *   listed so that you see it, never removed.
 */
import type { Stats } from "node:fs";
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { findRepo, isDirty } from "./git.js";
import { GitListings, ownership, realOrSame } from "./ownership.js";
import { recordOf, WorktreeRecords, type ReadRecord, type RecordIntegrity, type WorktreeRecord } from "./records.js";

export type TreeState = "live" | "idle" | "orphaned" | "missing" | "foreign";

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
  /** How far its record can be trusted (records.ts); absent without a record. */
  integrity?: RecordIntegrity;
  /** svc made this tree and may reclaim it (ownership.ts). */
  owned: boolean;
  /** What vouches for it: git's list of worktrees, or (git having forgotten it) svc's marker inside it. */
  ownedBy?: "git" | "marker";
  /** Why it is not svc's. */
  notOwned?: string;
  /** svc made the branch (see WorktreeRecord.branchCreated). */
  branchCreated?: boolean;
  /** An orphaned tree that is nonetheless a git checkout of its own: never collected. */
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

export interface Inventory {
  rows: TreeRow[];
  /** Damage found in svc's records (records.ts): shown by every verb, so it is never silent. */
  warnings: string[];
}

export async function inventory(input: InventoryInput): Promise<Inventory> {
  const { records, warnings } = await new WorktreeRecords(input.home).read();
  const listings = new GitListings();
  const rows: TreeRow[] = [];
  const byPath = new Map<string, ReadRecord>();
  for (const r of records) if (!byPath.has(r.record.path)) byPath.set(r.record.path, recordOf(records, r.record.path)!);
  for (const r of byPath.values()) rows.push(await recordedRow(r, input, listings));
  const roots = new Set([
    ...input.roots,
    ...records.filter((r) => r.integrity !== "damaged").map((r) => r.record.root),
  ]);
  for (const root of roots) {
    for (const repoName of await dirs(root)) {
      for (const slug of await dirs(join(root, repoName))) {
        const path = join(root, repoName, slug);
        if (byPath.has(path)) continue;
        const s = await lstat(path);
        const own = await ownership(path, undefined, listings);
        rows.push({
          path,
          repoName,
          slug,
          state: input.live.has(path) ? "live" : "foreign",
          ageMs: input.now - s.mtimeMs,
          ...(input.live.has(path) ? { session: input.live.get(path)! } : {}),
          ...(input.sizes !== false ? { sizeBytes: await sizeOf(path) } : {}),
          recorded: false,
          owned: false,
          ...(own.svcs ? {} : { notOwned: own.why }),
        });
      }
    }
  }
  return { rows: rows.sort((a, b) => a.path.localeCompare(b.path)), warnings };
}

async function recordedRow(r: ReadRecord, input: InventoryInput, listings: GitListings): Promise<TreeRow> {
  const rec = r.record;
  const onDisk = (await lstat(rec.path).catch(() => undefined)) !== undefined;
  const own = onDisk ? await ownership(rec.path, r, listings) : undefined;
  const live = input.live.has(rec.path);
  const session = input.live.get(rec.path) ?? rec.sessionId;
  const state: TreeState = !onDisk
    ? "missing"
    : live
      ? "live"
      : !own!.svcs
        ? "foreign"
        : own!.how === "listed"
          ? "idle"
          : "orphaned";
  const checkout = own?.svcs && own.how === "marker" ? await isCheckout(rec.path) : false;
  const dirty =
    own?.svcs && (own.how === "listed" || checkout) ? await isDirty(rec.path).catch(() => undefined) : undefined;
  return {
    path: rec.path,
    repo: rec.repo,
    repoName: rec.repoName,
    slug: rec.slug,
    branch: rec.branch,
    baseCommit: rec.baseCommit,
    ...(session ? { session } : {}),
    state,
    ...(dirty !== undefined ? { dirty } : {}),
    ageMs: input.now - rec.createdAt,
    createdAt: rec.createdAt,
    ...(rec.provisioning ? { provisioning: rec.provisioning } : {}),
    ...(onDisk && input.sizes !== false ? { sizeBytes: await sizeOf(rec.path) } : {}),
    recorded: true,
    integrity: r.integrity,
    owned: own?.svcs === true,
    ...(own?.svcs
      ? { ownedBy: own.how === "listed" ? ("git" as const) : ("marker" as const) }
      : own
        ? { notOwned: own.why }
        : {}),
    ...(rec.branchCreated ? { branchCreated: true } : {}),
    ...(checkout ? { checkout: true } : {}),
  };
}

/** Whether `path` is the top of a working git checkout (its `.git` leads to a repository git can read). */
async function isCheckout(path: string): Promise<boolean> {
  if (!(await lstat(join(path, ".git")).catch(() => undefined))) return false;
  return (await findRepo(path))?.top === (await realOrSame(path));
}

async function dirs(path: string): Promise<string[]> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
}

/** Bytes of the regular files under `path` (symlinks not followed). */
export async function sizeOf(path: string): Promise<number> {
  let total = 0;
  await walk(path, (s) => {
    if (s.isFile()) total += s.size;
  });
  return total;
}

/** The newest modification time of `path` and everything under it (symlinks not followed): when anything in a tree last changed. */
export async function lastChange(path: string): Promise<number> {
  let newest = 0;
  await walk(path, (s) => {
    newest = Math.max(newest, s.mtimeMs);
  });
  return newest;
}

async function walk(path: string, visit: (s: Stats) => void): Promise<void> {
  const s = await lstat(path).catch(() => undefined);
  if (!s) return;
  visit(s);
  if (s.isDirectory())
    for (const name of await readdir(path).catch(() => [] as string[])) await walk(join(path, name), visit);
}
