/**
 * A session's durable record, `<eventsDir>/<id>/session.json`: what a later daemon life needs to
 * show the session and to resume it (docs/sessions.md "Resume", docs/storage.md). Written
 * atomically each time the session's agent starts; carries a checksum of its content, so a damaged
 * file is told (never read as something else). Never holds a secret: auth is re-resolved and the
 * session token re-minted on resume.
 */
import { z } from "zod";
import { readCheckedDoc, writeCheckedDoc } from "../storage/checked-doc.js";
import { sessionFiles } from "./events-dir.js";
import type { LiveSession, SessionFixed } from "./live-session.js";

const VERSION = 1;

const optionValue = z.union([z.boolean(), z.number(), z.string()]);

const recordSchema = z.object({
  id: z.string(),
  adapter: z.string(),
  source: z.enum(["package", "config", "catalog", "terminal"]),
  kind: z.enum(["agent", "terminal"]),
  label: z.string().optional(),
  name: z.string().optional(),
  cwd: z.string(),
  parentId: z.string().optional(),
  depth: z.number().int().min(0),
  role: z.string(),
  createdAt: z.number(),
  options: z.record(z.string(), optionValue),
  skills: z.array(z.string()),
  worktree: z
    .object({ path: z.string(), branch: z.string(), repo: z.string(), slug: z.string(), baseCommit: z.string() })
    .optional(),
  worktreeOwner: z.boolean().optional(),
  delegation: z.number().int().min(0).optional(),
  run: z.object({ runId: z.string(), stepId: z.string() }).optional(),
  continuedFrom: z.string().optional(),
  /** The agent's own id for the session (ACP `session/new`): what `session/load` takes. */
  agentSessionId: z.string().optional(),
  /** How many times the session was resumed. */
  resumes: z.number().int().min(0).optional(),
  /** Whether the session was traced (docs/tracing.md): a resumed one is traced again, or not, alike. */
  traced: z.boolean().optional(),
});

export type SessionRecord = z.infer<typeof recordSchema>;

export type RecordRead =
  | { state: "ok"; record: SessionRecord }
  | { state: "missing" }
  | { state: "damaged"; path: string; reason: string };

/** The record of a live session (its fixed facts, the agent's session id, the resume count). */
export function recordOf(s: LiveSession, resumes: number): SessionRecord {
  const f = s.fixed;
  return {
    id: f.id,
    adapter: f.adapter,
    source: f.source,
    kind: f.kind,
    ...(f.label !== undefined ? { label: f.label } : {}),
    ...(f.name !== undefined ? { name: f.name } : {}),
    cwd: f.cwd,
    ...(f.parentId !== undefined ? { parentId: f.parentId } : {}),
    depth: f.depth,
    role: f.role,
    createdAt: f.createdAt,
    options: f.options,
    skills: f.skills,
    ...(f.worktree ? { worktree: f.worktree, worktreeOwner: s.worktreeOwner } : {}),
    ...(f.delegation !== undefined ? { delegation: f.delegation } : {}),
    ...(f.run ? { run: { runId: f.run.runId, stepId: f.run.stepId } } : {}),
    ...(s.continuedFrom ? { continuedFrom: s.continuedFrom } : {}),
    ...(s.handle?.agentSessionId ? { agentSessionId: s.handle.agentSessionId } : {}),
    ...(resumes > 0 ? { resumes } : {}),
    traced: s.traceEnv !== undefined,
  };
}

/** The fixed facts of the session a record describes (`source` and `auth` as they are now). */
export function fixedOf(
  record: SessionRecord,
  eventsPath: string,
  now: { source?: SessionFixed["source"]; auth?: SessionFixed["auth"] } = {},
): SessionFixed {
  return {
    id: record.id,
    adapter: record.adapter,
    source: now.source ?? record.source,
    kind: record.kind,
    label: record.label,
    name: record.name,
    cwd: record.cwd,
    parentId: record.parentId,
    depth: record.depth,
    role: record.role,
    createdAt: record.createdAt,
    options: record.options,
    skills: record.skills,
    auth: now.auth,
    eventsPath,
    ...(record.worktree ? { worktree: record.worktree } : {}),
    ...(record.delegation !== undefined ? { delegation: record.delegation } : {}),
    ...(record.run ? { run: record.run } : {}),
  };
}

/** Writes the record atomically: `{"version":1,"checksum":"<crc32 of the record's JSON>","record":{…}}`. */
export async function writeSessionRecord(eventsDir: string, record: SessionRecord): Promise<void> {
  await writeCheckedDoc(sessionFiles(eventsDir, record.id).record, VERSION, "record", record);
}

/**
 * Reads a session's record: `missing` when there is none (a session from before records, or an
 * unknown id), `damaged` (with why) when it is not what {@link writeSessionRecord} wrote: not
 * JSON, another version, a checksum that fails, fields that do not validate, or another id.
 * The file is left as it is, for inspection.
 */
export async function readSessionRecord(eventsDir: string, id: string): Promise<RecordRead> {
  const path = sessionFiles(eventsDir, id).record;
  const read = await readCheckedDoc(path, VERSION, "record", recordSchema);
  if (read.state !== "ok") return read;
  if (read.value.id !== id) return { state: "damaged", path, reason: `it names session ${read.value.id}` };
  return { state: "ok", record: read.value };
}
