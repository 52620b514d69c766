import { readdir, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../core/plugin-api/index.js";
import { readTextFile, writeFileDurable } from "../../../core/plugin-api/index.js";
import { readSegmentEntries, sha256, type BodyStore } from "./body-store.js";
import { parseJournal } from "./journal.js";
import type { JournalRecord, OutboxRow, SentinelTrace } from "./row.js";

/** The outbox's files under `$SVC_HOME`. */
export const OUTBOX_FILES = {
  /** Snapshot of every row's metadata (`{version, seq, rows}`), rewritten atomically at compaction. */
  snapshot: "sentinel-webhook-outbox.json",
  /** State changes since the snapshot, one JSON line each, fsynced per batch. */
  journal: "sentinel-webhook-outbox.journal",
  /** Segment files holding exact body bytes, each written once. */
  bodies: "sentinel-webhook-outbox.bodies",
} as const;

/** A journal moved aside by a compaction (`<journal>.<seq>`), deleted once a snapshot covers it. */
export const retiredJournalName = (seq: number): string => `${OUTBOX_FILES.journal}.${seq}`;

interface SnapshotFile {
  /** 1: bodies as whole files (still read); 2: bodies in segments (`bodyBytes.offset`); 3: with `traces`. */
  version: 1 | 2 | 3;
  seq: number;
  rows: OutboxRow[];
  /** What stays of each sentinel's removed rows (version 3). */
  traces?: Record<string, SentinelTrace>;
}

export interface LoadedState {
  seq: number;
  rows: OutboxRow[];
  traces: Record<string, SentinelTrace>;
  journal: JournalRecord[];
}

/** The snapshot text of `rows` and `traces` at `seq` (built synchronously, so it is one consistent state). */
export function snapshotText(seq: number, rows: OutboxRow[], traces: Record<string, SentinelTrace>): string {
  const lines = rows.map((r) => JSON.stringify(r)).join(",\n");
  return `{"version":3,"seq":${seq},"traces":${JSON.stringify(traces)},"rows":[${lines ? `\n${lines}\n` : ""}]}\n`;
}

export async function writeSnapshot(home: string, text: string): Promise<void> {
  await writeFileDurable(join(home, OUTBOX_FILES.snapshot), text, { mode: 0o600 });
}

/** Retired journals present in `home`, oldest first, by the sequence number in their name. */
export async function listRetiredJournals(home: string): Promise<Array<{ file: string; seq: number }>> {
  const prefix = `${OUTBOX_FILES.journal}.`;
  return (await readdir(home))
    .filter((f) => f.startsWith(prefix) && /^\d+$/.test(f.slice(prefix.length)))
    .map((file) => ({ file, seq: Number(file.slice(prefix.length)) }))
    .sort((a, b) => a.seq - b.seq);
}

export async function removeRetiredJournals(home: string, files: string[]): Promise<void> {
  for (const f of files) {
    await unlink(join(home, f)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
    });
  }
}

/**
 * Reads the snapshot and the journals (retired ones first, then the live one). A snapshot that is not a valid outbox file is moved aside
 * (`.corrupt-<ms>`) and the rows are rebuilt as pending from the body files (each body is the
 * envelope, which names its sentinel and event); the journal then replays on top.
 */
export async function loadState(home: string, bodies: BodyStore, logger: Logger, now: () => number): Promise<LoadedState> {
  const path = join(home, OUTBOX_FILES.snapshot);
  const text = await readTextFile(path);
  let seq = 0;
  let rows: OutboxRow[] = [];
  let traces: Record<string, SentinelTrace> = {};
  if (text !== undefined) {
    const snap = parseSnapshot(text);
    if (snap) {
      seq = snap.seq;
      traces = validTraces(snap.traces);
      rows = snap.rows.filter(isRow);
      if (rows.length !== snap.rows.length) logger.warn("outbox snapshot had malformed rows; they were skipped", { skipped: snap.rows.length - rows.length });
    } else {
      const aside = `${path}.corrupt-${now()}`;
      await rename(path, aside);
      logger.error("outbox snapshot is corrupt; moved aside and rebuilding rows from stored bodies", { file: aside });
      rows = await rowsFromBodies(bodies, now);
    }
  }
  const journal: JournalRecord[] = [];
  const files = [...(await listRetiredJournals(home)).map((r) => r.file), OUTBOX_FILES.journal];
  for (const file of files) {
    const parsed = parseJournal((await readTextFile(join(home, file))) ?? "");
    if (parsed.skipped > 0) logger.warn("outbox journal had unreadable lines; they were skipped", { file, skipped: parsed.skipped });
    journal.push(...parsed.records);
  }
  return { seq, rows, traces, journal };
}

function parseSnapshot(text: string): SnapshotFile | undefined {
  try {
    const v = JSON.parse(text) as SnapshotFile;
    return v && (v.version === 1 || v.version === 2 || v.version === 3) && typeof v.seq === "number" && Array.isArray(v.rows) ? v : undefined;
  } catch {
    return undefined;
  }
}

function validTraces(traces: unknown): Record<string, SentinelTrace> {
  const out: Record<string, SentinelTrace> = {};
  if (!traces || typeof traces !== "object") return out;
  for (const [id, t] of Object.entries(traces as Record<string, Partial<SentinelTrace>>)) {
    if (t && typeof t.removed === "number" && Array.isArray(t.eventIds)) out[id] = { removed: t.removed, eventIds: t.eventIds.filter((e) => typeof e === "string") };
  }
  return out;
}

function isRow(r: unknown): r is OutboxRow {
  const row = r as OutboxRow;
  return (
    !!row &&
    typeof row.sentinelId === "string" &&
    typeof row.requestId === "string" &&
    typeof row.eventId === "string" &&
    typeof row.bodyBytes?.file === "string" &&
    ["pending", "delivered", "dead"].includes(row.status)
  );
}

async function rowsFromBodies(bodies: BodyStore, now: () => number): Promise<OutboxRow[]> {
  const rows = new Map<string, OutboxRow>();
  const add = (requestId: string, body: Buffer, ref: OutboxRow["bodyBytes"]): void => {
    const row = rowFromBody(requestId, body, ref, now());
    if (row) rows.set(requestId, row);
  };
  for (const file of await bodies.list()) {
    const data = await bodies.readRaw(file).catch(() => undefined);
    if (!data) continue;
    if (file.endsWith(".json")) add(file.slice(0, -".json".length), data, { file, length: data.length, sha256: sha256(data) });
    else if (file.endsWith(".bin")) for (const e of readSegmentEntries(file, data)) add(e.requestId, e.body, e.ref);
  }
  return [...rows.values()];
}

/** A pending row rebuilt from a stored envelope, or undefined for a torn body (never accepted). */
function rowFromBody(requestId: string, body: Buffer, ref: OutboxRow["bodyBytes"], at: number): OutboxRow | undefined {
  let env: { id?: unknown; sentinelId?: unknown };
  try {
    env = JSON.parse(body.toString("utf8")) as typeof env;
  } catch {
    return undefined;
  }
  if (typeof env.id !== "string" || typeof env.sentinelId !== "string") return undefined;
  return {
    sentinelId: env.sentinelId,
    requestId,
    eventId: env.id,
    bodyBytes: ref,
    cursor: null,
    deliveryState: { attempts: 0, lastError: null, lastAt: null },
    status: "pending",
    createdAt: at,
    updatedAt: at,
    seen: false,
  };
}
