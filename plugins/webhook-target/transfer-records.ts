/**
 * The records of the webhook target's StoreTransfer (`svc store migrate`), the same from
 * either store (the files: transfer.ts; the team store: team/team-transfer.ts):
 * - `secret`: a vault row (ref, sentinel, createdAt) with the secret in clear, only inside the process;
 * - `row`: an outbox row with its full state and its exact body bytes (base64);
 * - `trace`: a sentinel's count of accepted events and what stays of its removed rows.
 */
import { z } from "zod";
import { SvcError, issuesToDetails } from "../../core/plugin-api/index.js";
import type { OutboxRow } from "./outbox/row.js";

const secretRecord = z.strictObject({
  type: z.literal("secret"),
  ref: z.string().regex(/^swsec_[0-9A-Za-z]+$/, "a vault ref is swsec_ followed by letters and digits"),
  sentinelId: z.string().min(1),
  secret: z.string().min(1),
  createdAt: z.number().int().nonnegative(),
});

const rowRecord = z.strictObject({
  type: z.literal("row"),
  sentinelId: z.string().min(1),
  requestId: z.string().min(1),
  eventId: z.string().min(1),
  status: z.enum(["pending", "delivered", "dead"]),
  deadReason: z
    .enum(["delivered_rejected", "sentinel_expired", "sentinel_removed", "age_out", "suspended_backlog"])
    .optional(),
  attempts: z.number().int().nonnegative(),
  lastError: z.string().nullable(),
  lastAt: z.number().int().nullable(),
  createdAt: z.number().int().nonnegative(),
  updatedAt: z.number().int().nonnegative(),
  seen: z.boolean(),
  replays: z.number().int().positive().optional(),
  replayedAt: z.number().int().optional(),
  /** The exact body bytes, base64. */
  body: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, "a body is base64"),
});

const traceRecord = z.strictObject({
  type: z.literal("trace"),
  sentinelId: z.string().min(1),
  /** Events accepted for the sentinel so far: its rows and its removed ones. */
  accepted: z.number().int().nonnegative(),
  /** Rows removed (reaped or evicted), counted. */
  removed: z.number().int().nonnegative(),
  /** Event ids of the last removed rows, oldest first (still known as duplicates). */
  eventIds: z.array(z.string()),
});

const transferRecord = z.discriminatedUnion("type", [secretRecord, rowRecord, traceRecord]);

export type SecretTransferRecord = z.infer<typeof secretRecord>;
export type RowTransferRecord = z.infer<typeof rowRecord>;
export type TraceTransferRecord = z.infer<typeof traceRecord>;
export type TransferRecord = z.infer<typeof transferRecord>;

/** What an export holds, or an import added: secrets, rows (of which `pending`), traces. */
export interface TransferSummary extends Record<string, number> {
  secrets: number;
  rows: number;
  pending: number;
  traces: number;
}

/** Checks records given to `import` (they come from another store, maybe another svc); the error never quotes a secret. */
export function parseTransferRecords(records: unknown[]): {
  secrets: SecretTransferRecord[];
  rows: RowTransferRecord[];
  traces: TraceTransferRecord[];
} {
  const out = {
    secrets: [] as SecretTransferRecord[],
    rows: [] as RowTransferRecord[],
    traces: [] as TraceTransferRecord[],
  };
  records.forEach((record, i) => {
    const parsed = transferRecord.safeParse(record);
    if (!parsed.success)
      throw new SvcError("invalid_input", `webhook target record ${i} is not a secret, row or trace record`, {
        details: issuesToDetails(parsed.error.issues, `records[${i}]`),
      });
    const r = parsed.data;
    if (r.type === "secret") out.secrets.push(r);
    else if (r.type === "row") out.rows.push(r);
    else out.traces.push(r);
  });
  return out;
}

export function summarize(parts: {
  secrets: readonly unknown[];
  rows: ReadonlyArray<{ status: string }>;
  traces: readonly unknown[];
}): TransferSummary {
  return {
    secrets: parts.secrets.length,
    rows: parts.rows.length,
    pending: parts.rows.filter((r) => r.status === "pending").length,
    traces: parts.traces.length,
  };
}

export function rowToRecord(row: OutboxRow, body: Buffer): RowTransferRecord {
  return {
    type: "row",
    sentinelId: row.sentinelId,
    requestId: row.requestId,
    eventId: row.eventId,
    status: row.status,
    ...(row.deadReason ? { deadReason: row.deadReason } : {}),
    attempts: row.deliveryState.attempts,
    lastError: row.deliveryState.lastError,
    lastAt: row.deliveryState.lastAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    seen: row.seen,
    ...(row.replays ? { replays: row.replays } : {}),
    ...(row.replayedAt !== undefined ? { replayedAt: row.replayedAt } : {}),
    body: body.toString("base64"),
  };
}

/** The outbox row of a record (its body ref is set by the outbox that stores it). */
export function recordToRow(r: RowTransferRecord): { row: OutboxRow; body: Buffer } {
  const body = Buffer.from(r.body, "base64");
  const row: OutboxRow = {
    sentinelId: r.sentinelId,
    requestId: r.requestId,
    eventId: r.eventId,
    bodyBytes: { file: "", length: body.length, sha256: "" },
    cursor: null,
    deliveryState: { attempts: r.attempts, lastError: r.lastError, lastAt: r.lastAt },
    status: r.status,
    ...(r.deadReason ? { deadReason: r.deadReason } : {}),
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    seen: r.seen,
    ...(r.replays ? { replays: r.replays } : {}),
    ...(r.replayedAt !== undefined ? { replayedAt: r.replayedAt } : {}),
  };
  return { row, body };
}
