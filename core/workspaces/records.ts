/**
 * The worktrees svc made, in `$SVC_HOME/worktrees.json` (written atomically under its lock): what
 * `svc worktree ls|rm|archive|gc` read, whichever root a tree went under. A record outlives its
 * session (a tree is never removed when its session ends) and is dropped by `rm`, `archive` and `gc`.
 *
 * Each record carries a checksum of its own fields, so a record that was damaged or edited by hand
 * is seen as such and never trusted to name a tree svc may delete. A record without one (written
 * by an svc older than checksums) is "unchecked": trusted only where git itself vouches for the tree. A file
 * that is not JSON at all is set aside by the next writer as `worktrees.json.damaged-<time>` and
 * reported by every reader; the trees it named are then not svc's to remove.
 */
import { createHash } from "node:crypto";
import { readdir, rename } from "node:fs/promises";
import { basename, dirname, isAbsolute, join } from "node:path";
import { z } from "zod";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { damagedCopyFindings } from "../storage/file-check.js";
import { readTextFile, writeJsonFile } from "../storage/json-file.js";
import { withFileLock } from "../storage/lock.js";
import { canonicalJson } from "../runtime/canonical-json.js";

export const RECORDS_FILE = "worktrees.json";
const DAMAGED_PREFIX = `${RECORDS_FILE}.damaged-`;

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
  /** The id of the marker svc wrote inside the tree (marker.ts); absent in records older than markers. */
  marker?: string;
  /** `sha256:<hex>` of the record's other fields (records.ts); absent in records older than checksums. */
  checksum?: string;
}

/** How far a record can be trusted: its checksum holds, it has none (older svc, or written by hand), or it fails. */
export type RecordIntegrity = "verified" | "unchecked" | "damaged";

export interface ReadRecord {
  record: WorktreeRecord;
  integrity: RecordIntegrity;
  /** What is wrong with a damaged record. */
  problem?: string;
}

export interface RecordsView {
  records: ReadRecord[];
  /** Damage found on the way: a file that is not JSON, damaged records, files set aside earlier. */
  warnings: string[];
}

const absolute = z.string().refine((p) => isAbsolute(p), "must be an absolute path");
const RecordShape = z.looseObject({
  path: absolute,
  repo: absolute,
  repoName: z.string().min(1),
  slug: z.string().min(1),
  branch: z.string().min(1),
  baseCommit: z.string(),
  branchCreated: z.boolean().optional(),
  root: absolute,
  createdAt: z.number().finite(),
  sessionId: z.string().optional(),
  provisioning: z.looseObject({ state: z.enum(["done", "failed"]) }).optional(),
  marker: z
    .string()
    .regex(/^[0-9a-f]{32}$/, "must be 32 hex digits")
    .optional(),
  checksum: z.string().optional(),
});

export function checksumOf(rec: WorktreeRecord): string {
  const { checksum: _omit, ...fields } = rec;
  return `sha256:${createHash("sha256").update(canonicalJson(fields)).digest("hex")}`;
}

export function sealRecord(rec: WorktreeRecord): WorktreeRecord {
  const { checksum: _omit, ...fields } = rec;
  return { ...fields, checksum: checksumOf(fields) };
}

/** Classifies one entry of the file's `trees`; undefined when it does not even name a path. */
export function checkRecord(raw: unknown): ReadRecord | undefined {
  const path = (raw as { path?: unknown } | null)?.path;
  if (typeof path !== "string" || path === "") return undefined;
  const shape = RecordShape.safeParse(raw);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    return {
      record: raw as WorktreeRecord,
      integrity: "damaged",
      problem: `${issue.path.join(".") || "record"} ${issue.message}`,
    };
  }
  const rec = shape.data as WorktreeRecord;
  if (rec.checksum === undefined) return { record: rec, integrity: "unchecked" };
  if (rec.checksum !== checksumOf(rec))
    return {
      record: rec,
      integrity: "damaged",
      problem: "its checksum does not match its fields (damaged, or edited by hand)",
    };
  return { record: rec, integrity: "verified" };
}

type Parsed = { ok: true; trees: unknown[] } | { ok: false; problem: string };

function parseFile(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, problem: `not valid JSON (${(err as Error).message})` };
  }
  const trees = (value as { trees?: unknown } | null)?.trees;
  if (!Array.isArray(trees)) return { ok: false, problem: "no `trees` list" };
  return { ok: true, trees };
}

/**
 * The record that speaks for `path`: a sound one when there is one, else a damaged one (so that
 * ownership says the record is damaged, not that there is none). Inventory and the re-check before
 * a deletion choose alike.
 */
export function recordOf(records: readonly ReadRecord[], path: string): ReadRecord | undefined {
  let found: ReadRecord | undefined;
  for (const r of records) {
    if (r.record.path !== path) continue;
    if (r.integrity !== "damaged") return r;
    found ??= r;
  }
  return found;
}

export class WorktreeRecords {
  readonly path: string;

  constructor(home: string) {
    this.path = join(home, RECORDS_FILE);
  }

  /** Every record with its integrity, and what damage was found (set-aside files included). Never throws for damage. */
  async read(): Promise<RecordsView> {
    const view = await this.readFile();
    for (const name of await this.setAside()) {
      view.warnings.push(
        `${join(dirname(this.path), name)} is a damaged records file svc set aside; the trees it names are not treated as svc's (left alone); look through it, then delete it`,
      );
    }
    return view;
  }

  /** The file alone: what the spawn path needs, without a look through `$SVC_HOME` for set-aside files. */
  private async readFile(): Promise<RecordsView> {
    const warnings: string[] = [];
    const records: ReadRecord[] = [];
    const text = await readTextFile(this.path);
    if (text === undefined) return { records, warnings };
    const parsed = parseFile(text);
    if (!parsed.ok) {
      warnings.push(
        `${this.path} is damaged (${parsed.problem}): svc trusts none of its records, so it removes no tree; the next change svc makes to it sets it aside as ${DAMAGED_PREFIX}<time>`,
      );
      return { records, warnings };
    }
    for (const raw of parsed.trees) {
      const r = checkRecord(raw);
      if (!r) {
        warnings.push(`${this.path}: a record without a path was ignored`);
        continue;
      }
      if (r.integrity === "damaged")
        warnings.push(
          `${this.path}: the record of ${r.record.path} is damaged: ${r.problem}; svc leaves that path alone`,
        );
      records.push(r);
    }
    return { records, warnings };
  }

  /** The trustworthy records (verified or unchecked), for the spawn path. */
  async list(): Promise<WorktreeRecord[]> {
    return (await this.readFile()).records.filter((r) => r.integrity !== "damaged").map((r) => r.record);
  }

  async find(path: string): Promise<WorktreeRecord | undefined> {
    return (await this.list()).find((r) => r.path === path);
  }

  /** Adds or replaces the record of `rec.path`, sealed with its checksum. Returns where a damaged file was set aside, if one was. */
  async put(rec: WorktreeRecord): Promise<{ setAside?: string }> {
    return this.update((trees) => [
      ...trees.filter((t) => (t as { path?: unknown }).path !== rec.path),
      sealRecord(rec),
    ]);
  }

  /** Changes a trustworthy record; a damaged one is never rewritten (that would launder it), an unchecked one stays unchecked. */
  async patch(path: string, change: Partial<WorktreeRecord>): Promise<void> {
    await this.update((trees) => {
      let changed = false;
      const next = trees.map((t) => {
        const r = checkRecord(t);
        if (!r || r.record.path !== path || r.integrity === "damaged") return t;
        changed = true;
        const merged = { ...r.record, ...change };
        return r.integrity === "verified" ? sealRecord(merged) : merged;
      });
      return changed ? next : undefined;
    });
  }

  /** Drops the trustworthy records of `paths`; damaged ones stay, so the damage stays visible. */
  async remove(paths: string[]): Promise<void> {
    if (paths.length === 0) return;
    await this.update((trees) => {
      const next = trees.filter((t) => {
        const r = checkRecord(t);
        return !(r && r.integrity !== "damaged" && paths.includes(r.record.path));
      });
      return next.length === trees.length ? undefined : next;
    });
  }

  /** Read-modify-write of `trees` under the lock; a file that is not JSON is set aside first. */
  private async update(mutate: (trees: unknown[]) => unknown[] | undefined): Promise<{ setAside?: string }> {
    return withFileLock(this.path, async () => {
      const text = await readTextFile(this.path);
      let trees: unknown[] = [];
      let setAside: string | undefined;
      if (text !== undefined) {
        const parsed = parseFile(text);
        if (parsed.ok) trees = parsed.trees;
        else {
          setAside = join(dirname(this.path), `${DAMAGED_PREFIX}${new Date().toISOString().replace(/[:.]/g, "-")}`);
          await rename(this.path, setAside);
        }
      }
      const next = mutate(trees);
      if (next !== undefined) await writeJsonFile(this.path, { trees: next });
      return setAside ? { setAside } : {};
    });
  }

  private async setAside(): Promise<string[]> {
    const names = await readdir(dirname(this.path)).catch(() => [] as string[]);
    return names.filter((n) => n.startsWith(DAMAGED_PREFIX) && n !== basename(this.path)).sort();
  }
}

/** `svc doctor`'s check of worktrees.json (read-only): the file parses and each record's checksum holds; set-aside copies. */
export async function checkWorktreeRecords(home: string): Promise<DoctorFinding[]> {
  const out: DoctorFinding[] = [];
  const text = await readTextFile(join(home, RECORDS_FILE));
  if (text !== undefined) {
    const parsed = parseFile(text);
    if (!parsed.ok) {
      out.push({
        severity: "error",
        file: RECORDS_FILE,
        message: `damaged (${parsed.problem}): svc trusts none of its records, so it cleans up no worktree`,
        fix: `restore it from a backup or fix it by hand; otherwise the next worktree change sets it aside as ${DAMAGED_PREFIX}<time> and svc starts a new one (the trees it named are left alone)`,
      });
    } else {
      for (const raw of parsed.trees) {
        const r = checkRecord(raw);
        if (r?.integrity !== "damaged") continue;
        out.push({
          severity: "error",
          file: RECORDS_FILE,
          message: `the record of ${r.record.path} is damaged: ${r.problem}; svc leaves that worktree alone (never reclaims it)`,
          fix: "look at the worktree; remove it with git worktree remove if it is no longer wanted, then delete its record from the file",
        });
      }
    }
  }
  out.push(...(await damagedCopyFindings(home, home, RECORDS_FILE)));
  return out;
}
