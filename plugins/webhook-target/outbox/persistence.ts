import { rename } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../core/plugin-api/index.js";
import { readTextFile, writeFileDurable } from "../../../core/plugin-api/index.js";
import { sha256, type BodyStore } from "./body-store.js";
import { parseJournal } from "./journal.js";
import type { JournalRecord, OutboxRow } from "./row.js";

/** The outbox's files under `$SVC_HOME`. */
export const OUTBOX_FILES = {
  /** Snapshot of every row's metadata (`{version, seq, rows}`), rewritten atomically at compaction. */
  snapshot: "sentinel-webhook-outbox.json",
  /** State changes since the snapshot, one JSON line each, fsynced per batch. */
  journal: "sentinel-webhook-outbox.journal",
  /** One file per row holding its exact body bytes, written once. */
  bodies: "sentinel-webhook-outbox.bodies",
} as const;

interface SnapshotFile {
  version: 1;
  seq: number;
  rows: OutboxRow[];
}

export interface LoadedState {
  seq: number;
  rows: OutboxRow[];
  journal: JournalRecord[];
}

export async function writeSnapshot(home: string, seq: number, rows: OutboxRow[]): Promise<void> {
  const lines = rows.map((r) => JSON.stringify(r)).join(",\n");
  const text = `{"version":1,"seq":${seq},"rows":[${lines ? `\n${lines}\n` : ""}]}\n`;
  await writeFileDurable(join(home, OUTBOX_FILES.snapshot), text, { mode: 0o600 });
}

/**
 * Reads the snapshot and the journal. A snapshot that is not a valid outbox file is moved aside
 * (`.corrupt-<ms>`) and the rows are rebuilt as pending from the body files (each body is the
 * envelope, which names its sentinel and event); the journal then replays on top.
 */
export async function loadState(home: string, bodies: BodyStore, logger: Logger, now: () => number): Promise<LoadedState> {
  const path = join(home, OUTBOX_FILES.snapshot);
  const text = await readTextFile(path);
  let seq = 0;
  let rows: OutboxRow[] = [];
  if (text !== undefined) {
    const snap = parseSnapshot(text);
    if (snap) {
      seq = snap.seq;
      rows = snap.rows.filter(isRow);
      if (rows.length !== snap.rows.length) logger.warn("outbox snapshot had malformed rows; they were skipped", { skipped: snap.rows.length - rows.length });
    } else {
      const aside = `${path}.corrupt-${now()}`;
      await rename(path, aside);
      logger.error("outbox snapshot is corrupt; moved aside and rebuilding rows from stored bodies", { file: aside });
      rows = await rowsFromBodies(bodies, now);
    }
  }
  const journalText = (await readTextFile(join(home, OUTBOX_FILES.journal))) ?? "";
  const parsed = parseJournal(journalText);
  if (parsed.skipped > 0) logger.warn("outbox journal had unreadable lines; they were skipped", { skipped: parsed.skipped });
  return { seq, rows, journal: parsed.records };
}

function parseSnapshot(text: string): SnapshotFile | undefined {
  try {
    const v = JSON.parse(text) as SnapshotFile;
    return v && v.version === 1 && typeof v.seq === "number" && Array.isArray(v.rows) ? v : undefined;
  } catch {
    return undefined;
  }
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
  const rows: OutboxRow[] = [];
  for (const file of await bodies.list()) {
    if (!file.endsWith(".json")) continue;
    try {
      const body = await bodies.readRaw(file);
      const env = JSON.parse(body.toString("utf8")) as { id?: unknown; sentinelId?: unknown };
      if (typeof env.id !== "string" || typeof env.sentinelId !== "string") continue;
      const at = now();
      rows.push({
        sentinelId: env.sentinelId,
        requestId: file.slice(0, -".json".length),
        eventId: env.id,
        bodyBytes: { file, length: body.length, sha256: sha256(body) },
        cursor: null,
        deliveryState: { attempts: 0, lastError: null, lastAt: null },
        status: "pending",
        createdAt: at,
        updatedAt: at,
        seen: false,
      });
    } catch {
      // A torn body (killed mid-write) belongs to a row that was never accepted.
    }
  }
  return rows;
}
