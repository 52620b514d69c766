import { readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { textChecksum, writeFileDurable } from "../../../core/plugin-api/index.js";
import type { JournalRecord, OutboxRow, SentinelTrace } from "./row.js";

/** The outbox's files under `$SVC_HOME`. */
export const OUTBOX_FILES = {
  /** Snapshot of every row's metadata and the traces (`{version, seq, checksum, traces, rows}`), rewritten atomically at compaction. */
  snapshot: "sentinel-webhook-outbox.json",
  /** State changes since the snapshot, one checksummed JSON line each, durable per batch. */
  journal: "sentinel-webhook-outbox.journal",
  /** Segment files holding exact body bytes, each written once. */
  bodies: "sentinel-webhook-outbox.bodies",
} as const;

/** A journal moved aside by a compaction (`<journal>.<seq>`), deleted once a snapshot covers it. */
export const retiredJournalName = (seq: number): string => `${OUTBOX_FILES.journal}.${seq}`;

export interface SnapshotFile {
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
  const rest = `"traces":${JSON.stringify(traces)},"rows":[${lines ? `\n${lines}\n` : ""}]}\n`;
  return `{"version":3,"seq":${seq},"checksum":"${textChecksum(rest)}",${rest}`;
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
