/**
 * The worktrees svc made, in `$SVC_HOME/worktrees.json` (written atomically under its lock): what
 * `svc worktree ls|rm|archive|gc` read, whichever root a tree went under. A record outlives its
 * session (a tree is never removed when its session ends) and is dropped by `rm`, `archive` and `gc`.
 */
import { join } from "node:path";
import { readJsonFile, updateJsonFile } from "../storage/json-file.js";

export const RECORDS_FILE = "worktrees.json";

export interface WorktreeRecord {
  path: string;
  /** The main checkout. */
  repo: string;
  repoName: string;
  slug: string;
  branch: string;
  /** The commit the branch was made from (or found at, for an existing branch). */
  baseCommit: string;
  /** svc made the branch for this tree (`git worktree add -b`); only such a branch may be deleted by `rm`. */
  branchCreated?: boolean;
  root: string;
  createdAt: number;
  /** The session the tree was made for. */
  sessionId?: string;
  /** The last provisioning outcome. */
  provisioning?: { state: "done" | "failed"; phase?: string; command?: string };
}

interface RecordsFile {
  trees: WorktreeRecord[];
}

export class WorktreeRecords {
  readonly path: string;

  constructor(home: string) {
    this.path = join(home, RECORDS_FILE);
  }

  async list(): Promise<WorktreeRecord[]> {
    return (await readJsonFile<RecordsFile>(this.path))?.trees ?? [];
  }

  async find(path: string): Promise<WorktreeRecord | undefined> {
    return (await this.list()).find((r) => r.path === path);
  }

  /** Adds or replaces the record of `rec.path`. */
  async put(rec: WorktreeRecord): Promise<void> {
    await updateJsonFile<RecordsFile>(this.path, (cur) => ({ trees: [...(cur?.trees ?? []).filter((r) => r.path !== rec.path), rec] }));
  }

  async patch(path: string, change: Partial<WorktreeRecord>): Promise<void> {
    await updateJsonFile<RecordsFile>(this.path, (cur) => {
      if (!cur?.trees.some((r) => r.path === path)) return undefined;
      return { trees: cur.trees.map((r) => (r.path === path ? { ...r, ...change } : r)) };
    });
  }

  async remove(paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    await updateJsonFile<RecordsFile>(this.path, (cur) => (cur ? { trees: cur.trees.filter((r) => !paths.includes(r.path)) } : undefined));
  }
}
