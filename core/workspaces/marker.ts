/**
 * The marker svc writes inside every worktree it makes: `<tree>/.svc-worktree`, a small JSON file
 * holding a random id that the tree's record in `worktrees.json` holds too. It is how svc knows,
 * after git has forgotten a tree, that the directory at a recorded path is still the tree it made
 * and not a folder someone put there since (docs/workspaces.md, "What svc may delete").
 *
 * So that neither `git status` nor an agent's `git add -A` ever sees it, the repository's
 * `info/exclude` gets the line `/.svc-worktree*` once (git has no per-worktree exclude file); svc
 * never removes that line.
 */
import { appendFile, lstat, mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileDurable } from "../storage/atomic-write.js";

export const MARKER_FILE = ".svc-worktree";
const MARKER_SCHEMA = "svc/worktree-marker/v1";
/** The marker and the temporary file its atomic write goes through. */
const EXCLUDE_LINE = `/${MARKER_FILE}*`;
/** A marker is a few hundred bytes; anything larger is not one of ours. */
const MAX_MARKER_BYTES = 4096;

export interface Marker {
  schema: typeof MARKER_SCHEMA;
  /** Random, 32 hex digits; the same as the record's `marker`. */
  id: string;
  /** The tree's path when svc made it. */
  path: string;
  createdAt: number;
}

/** Adds `/.svc-worktree*` to `<commonDir>/info/exclude` unless a line already says it. */
export async function excludeMarker(commonDir: string): Promise<void> {
  const file = join(commonDir, "info", "exclude");
  const text = await readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return "";
    throw err;
  });
  if (text.split(/\r?\n/).some((line) => line.trim() === EXCLUDE_LINE)) return;
  await mkdir(join(commonDir, "info"), { recursive: true });
  await appendFile(
    file,
    `${text === "" || text.endsWith("\n") ? "" : "\n"}# svc: the marker in each worktree svc makes\n${EXCLUDE_LINE}\n`,
  );
}

/** Writes the marker into a tree svc has just made (atomically: it is never seen half written). */
export async function writeMarker(tree: string, id: string, createdAt: number): Promise<void> {
  const marker: Marker = { schema: MARKER_SCHEMA, id, path: tree, createdAt };
  await writeFileDurable(join(tree, MARKER_FILE), JSON.stringify(marker) + "\n", { mode: 0o644 });
}

/** The marker inside `tree`, or why there is none that counts: a missing, linked, oversized or unreadable file is none. */
export async function readMarker(tree: string): Promise<{ marker: Marker } | { missing: string }> {
  const file = join(tree, MARKER_FILE);
  const st = await lstat(file).catch(() => undefined);
  if (!st) return { missing: `no ${MARKER_FILE} marker` };
  if (!st.isFile()) return { missing: `${MARKER_FILE} is not a regular file` };
  if (st.size > MAX_MARKER_BYTES) return { missing: `${MARKER_FILE} is too large to be svc's marker` };
  try {
    const m = JSON.parse(await readFile(file, "utf8")) as Partial<Marker>;
    if (m.schema !== MARKER_SCHEMA || typeof m.id !== "string" || typeof m.path !== "string")
      return { missing: `${MARKER_FILE} is not svc's marker` };
    return { marker: m as Marker };
  } catch {
    return { missing: `${MARKER_FILE} is damaged (not JSON)` };
  }
}
