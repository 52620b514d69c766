/**
 * Loading the outbox's files at open: the snapshot, then the journals replayed on top, with
 * everything damaged found, kept and reported (see docs/storage.md, "Webhook outbox").
 */
import { rename } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../core/plugin-api/index.js";
import {
  checkJournalAtStart,
  keepDamagedCopy,
  lossRecordPath,
  lossSeqs,
  readTextFile,
  textChecksum,
} from "../../../core/plugin-api/index.js";
import { readSegmentEntries, sha256, type BodyStore } from "./body-store.js";
import { isRow, parseJournal, type ParsedJournal } from "./journal.js";
import { listRetiredJournals, OUTBOX_FILES, type LoadedState, type SnapshotFile } from "./persistence.js";
import type { JournalRecord, OutboxRow, SentinelTrace } from "./row.js";

/** What loading found, for the start-up log line and `svc doctor`. */
export interface LoadReport {
  /** Rows the snapshot held (or that were rebuilt from bodies), before the journals replayed. */
  snapshotRows: number;
  /** Journal records read and replayed. */
  records: number;
  /** Whole records that failed their checksum or were not records: lost, and told. */
  damaged: Array<{ file: string; lines: number[]; copy: string }>;
  /** A torn last line dropped, per file (`acknowledged`: part of a record counted missing below). */
  torn: Array<{ file: string; bytes: number; acknowledged: boolean }>;
  /**
   * Records a journal's length record counts as acknowledged that the file no longer holds (cut
   * from its end): lost, told at `error`, and kept in `<journal>.missing` until acknowledged.
   */
  missing: Array<{ file: string; records: number; bytes: number; seqs?: string }>;
  /** The snapshot was missing or damaged and the rows were rebuilt from the stored bodies. */
  rebuilt?: { reason: "missing" | "damaged"; rows: number; copy?: string };
}

/**
 * Reads the journals (retired ones first, then the live one) and the snapshot. A journal with
 * damaged lines is copied aside before anything replaces it. A snapshot that is damaged (its
 * checksum fails, or it is not an outbox file) is moved aside (`.damaged-<ms>`); one that is
 * missing while bodies or journal records show there was one is told as missing; either way the
 * rows are rebuilt as pending from the body files (each segment frame, or else the envelope, names its
 * sentinel and event: those events are sent again) and the journals replay on top.
 */
export async function loadState(
  home: string,
  bodies: BodyStore,
  logger: Logger,
  now: () => number,
): Promise<LoadedState & { report: LoadReport }> {
  const report: LoadReport = { snapshotRows: 0, records: 0, damaged: [], torn: [], missing: [] };
  const files = await readOutboxFiles(home, bodies);
  const journal: JournalRecord[] = [];
  for (const { file, parsed } of files.journals) {
    if (parsed.damaged.length > 0) {
      const copy = await keepDamagedCopy(join(home, file), now());
      report.damaged.push({ file, lines: parsed.damaged, copy });
      logger.error(
        "outbox journal is damaged: the records on these lines could not be read and are lost; a copy of the file is kept",
        { file, lines: parsed.damaged.join(", "), copy },
      );
    }
    const lastSeq = parsed.records.at(-1)?.seq;
    const length = await checkJournalAtStart(join(home, file), {
      now: now(),
      ...(lastSeq !== undefined ? { lastPresentSeq: lastSeq } : {}),
    });
    if (length.loss) {
      const { loss } = length.loss;
      const seqs = lossSeqs(loss);
      report.missing.push({ file, records: loss.records, bytes: loss.bytes, ...(seqs ? { seqs } : {}) });
      logger.error(
        "outbox journal is missing records it had acknowledged as durable (cut from its end): what they recorded (accepted events, deliveries) is lost and cannot be recovered; the loss is kept until acknowledged (see svc doctor)",
        {
          file,
          recordsMissing: loss.records,
          bytesMissing: loss.bytes,
          ...(seqs ? { seqs } : {}),
          lossRecord: lossRecordPath(file),
          ...(length.loss.keepError ? { lossNotKept: length.loss.keepError } : {}),
        },
      );
    }
    for (const earlier of length.earlier)
      logger.warn("outbox journal lost records at an earlier start, not yet acknowledged (see svc doctor)", {
        file,
        records: earlier.records,
        foundAt: earlier.foundAt,
        lossRecord: lossRecordPath(file),
      });
    if (parsed.tornBytes > 0) {
      const acknowledged = length.check?.torn.acknowledged === true;
      report.torn.push({ file, bytes: parsed.tornBytes, acknowledged });
      logger.warn(
        acknowledged
          ? "outbox journal ended in a torn line, part of a record it had acknowledged (counted missing above); dropped"
          : "outbox journal ended in a torn line (a write cut short, never acknowledged); dropped",
        {
          file,
          bytes: parsed.tornBytes,
          records: 1,
          ...(lastSeq !== undefined ? { afterSeq: lastSeq } : {}),
        },
      );
    }
    journal.push(...parsed.records);
  }
  report.records = journal.length;
  const path = join(home, OUTBOX_FILES.snapshot);
  const snap = files.snapshot;
  let seq = 0;
  let rows: OutboxRow[] = [];
  let traces: Record<string, SentinelTrace> = {};
  if (snap.state === "ok") {
    seq = snap.seq;
    traces = snap.traces;
    rows = snap.rows;
    if (snap.malformedRows > 0)
      logger.warn("outbox snapshot had malformed rows; they were skipped", { skipped: snap.malformedRows });
  } else if (snap.state === "damaged") {
    const copy = `${path}.damaged-${now()}`;
    await rename(path, copy);
    rows = await rowsFromBodies(bodies, now);
    report.rebuilt = { reason: "damaged", rows: rows.length, copy };
    logger.error(
      "outbox snapshot is damaged; moved aside, and its rows rebuilt from the stored bodies as pending (they are sent again)",
      { file: copy, rows: rows.length },
    );
  } else if (snap.state === "missing") {
    rows = await rowsFromBodies(bodies, now);
    report.rebuilt = { reason: "missing", rows: rows.length };
    logger.error(
      "outbox snapshot is missing though the outbox had one; its rows rebuilt from the stored bodies as pending (they are sent again)",
      { file: path, rows: rows.length },
    );
  }
  report.snapshotRows = rows.length;
  return { seq, rows, traces, journal, report };
}

/** The snapshot as read: whole, damaged (checksum or shape), missing though the outbox had one, or absent (a new outbox). */
export type SnapshotRead =
  | { state: "ok"; seq: number; rows: OutboxRow[]; traces: Record<string, SentinelTrace>; malformedRows: number }
  | { state: "damaged" }
  | { state: "missing" }
  | { state: "none" };

/** The outbox's files as they are on disk, parsed, with nothing changed (loading and `svc doctor` share it). */
export interface OutboxFilesRead {
  /** Retired journals first, oldest first, then the live one. */
  journals: Array<{ file: string; parsed: ParsedJournal }>;
  snapshot: SnapshotRead;
}

/**
 * Reads the journals and the snapshot without changing anything. A snapshot is told `missing`
 * when it is absent while retired journals, a journal record past the first, or stored bodies
 * show the outbox had one.
 */
export async function readOutboxFiles(home: string, bodies: BodyStore): Promise<OutboxFilesRead> {
  const journals: OutboxFilesRead["journals"] = [];
  for (const file of [...(await listRetiredJournals(home)).map((r) => r.file), OUTBOX_FILES.journal]) {
    journals.push({ file, parsed: parseJournal((await readTextFile(join(home, file))) ?? "") });
  }
  const text = await readTextFile(join(home, OUTBOX_FILES.snapshot));
  const snap = text === undefined ? undefined : parseSnapshot(text);
  let snapshot: SnapshotRead;
  if (snap) {
    const rows = snap.rows.filter(isRow);
    snapshot = {
      state: "ok",
      seq: snap.seq,
      rows,
      traces: validTraces(snap.traces),
      malformedRows: snap.rows.length - rows.length,
    };
  } else if (text !== undefined) snapshot = { state: "damaged" };
  else if (
    journals.length > 1 ||
    journals.some((j) => j.parsed.records.some((r) => r.seq > 1)) ||
    (await bodies.list().catch(() => [])).length > 0
  )
    snapshot = { state: "missing" };
  else snapshot = { state: "none" };
  return { journals, snapshot };
}

/** A version 3 snapshot starts `{"version":3,"seq":N,"checksum":"<crc32>",`; the checksum covers the rest. */
const SNAPSHOT_HEAD = /^\{"version":3,"seq":(\d+),"checksum":"([0-9a-f]{8})",/;

/** The snapshot, or undefined when it is damaged (checksum) or not an outbox snapshot. Versions 1 and 2 carry no checksum. */
function parseSnapshot(text: string): SnapshotFile | undefined {
  const head = SNAPSHOT_HEAD.exec(text);
  if (head ? textChecksum(text.slice(head[0].length)) !== head[2] : text.startsWith('{"version":3')) return undefined;
  try {
    const v = JSON.parse(text) as SnapshotFile;
    return v &&
      (v.version === 1 || v.version === 2 || v.version === 3) &&
      typeof v.seq === "number" &&
      Array.isArray(v.rows)
      ? v
      : undefined;
  } catch {
    return undefined;
  }
}

function validTraces(traces: unknown): Record<string, SentinelTrace> {
  const out: Record<string, SentinelTrace> = {};
  if (!traces || typeof traces !== "object") return out;
  for (const [id, t] of Object.entries(traces as Record<string, Partial<SentinelTrace>>)) {
    if (t && typeof t.removed === "number" && Array.isArray(t.eventIds))
      out[id] = { removed: t.removed, eventIds: t.eventIds.filter((e) => typeof e === "string") };
  }
  return out;
}

async function rowsFromBodies(bodies: BodyStore, now: () => number): Promise<OutboxRow[]> {
  const rows = new Map<string, OutboxRow>();
  const add = (
    requestId: string,
    body: Buffer,
    ref: OutboxRow["bodyBytes"],
    named: { sentinelId?: string; eventId?: string } = {},
  ): void => {
    const row = rowFromBody(requestId, body, ref, now(), named);
    if (row) rows.set(requestId, row);
  };
  for (const file of await bodies.list()) {
    const data = await bodies.readRaw(file).catch(() => undefined);
    if (!data) continue;
    if (file.endsWith(".json"))
      add(file.slice(0, -".json".length), data, { file, length: data.length, sha256: sha256(data) });
    else if (file.endsWith(".bin")) for (const e of readSegmentEntries(file, data)) add(e.requestId, e.body, e.ref, e);
  }
  return [...rows.values()];
}

/**
 * A pending row rebuilt from a stored body, or undefined for a torn body (never accepted). Its
 * sentinel and event come from the segment frame, or (older segments, whole-file bodies) from the
 * envelope, which names them.
 */
function rowFromBody(
  requestId: string,
  body: Buffer,
  ref: OutboxRow["bodyBytes"],
  at: number,
  named: { sentinelId?: string; eventId?: string },
): OutboxRow | undefined {
  let env: { id?: unknown; sentinelId?: unknown };
  try {
    env = JSON.parse(body.toString("utf8")) as typeof env;
  } catch {
    return undefined;
  }
  const sentinelId = named.sentinelId ?? env.sentinelId;
  const eventId = named.eventId ?? env.id;
  if (typeof eventId !== "string" || typeof sentinelId !== "string") return undefined;
  return {
    sentinelId,
    requestId,
    eventId,
    bodyBytes: ref,
    cursor: null,
    deliveryState: { attempts: 0, lastError: null, lastAt: null },
    status: "pending",
    createdAt: at,
    updatedAt: at,
    seen: false,
  };
}
