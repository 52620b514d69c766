/**
 * The team store's side of the webhook target's {@link StoreTransfer} (records: ../transfer-records.ts):
 * plain SQL on the webhook tables. An import is one transaction: secrets sealed with the team's
 * key, rows inserted `ON CONFLICT DO NOTHING` (unique per request id and per (sentinel, event);
 * an event the sentinel's trace already holds is skipped too), a delivery job added for each
 * pending row inserted, and traces. Loaded only in team mode.
 */
import type { StoreTransfer, TeamDatabase, TeamJobs } from "../../../core/plugin-api/index.js";
import { SvcError } from "../../../core/plugin-api/index.js";
import { sha256 } from "../outbox/body-store.js";
import {
  parseTransferRecords,
  summarize,
  type RowTransferRecord,
  type TraceTransferRecord,
} from "../transfer-records.js";
import { WEBHOOK_MIGRATIONS, WEBHOOK_OWNER } from "./schema.js";
import { deliveryJobOf } from "./team-outbox.js";
import { listTeamSecrets } from "./team-vault.js";

interface OutboxSqlRow extends Record<string, unknown> {
  request_id: string;
  sentinel_id: string;
  event_id: string;
  body: Buffer;
  body_sha256: string;
  status: RowTransferRecord["status"];
  dead_reason: RowTransferRecord["deadReason"] | null;
  attempts: number;
  last_error: string | null;
  last_at: string | null;
  created_at: string;
  updated_at: string;
  seen: boolean;
  replays: number;
  replayed_at: string | null;
}

const num = (v: string | null): number | null => (v === null ? null : Number(v));

export function teamTransfer(db: TeamDatabase, jobs: () => TeamJobs): StoreTransfer {
  const migrated = () => db.migrate(WEBHOOK_OWNER, WEBHOOK_MIGRATIONS);
  return {
    async export(sentinelIds) {
      await migrated();
      const ids = [...sentinelIds];
      const secrets = (await listTeamSecrets(db, sentinelIds)).map((s) => ({ type: "secret" as const, ...s }));
      const { rows: sqlRows } = await db.query<OutboxSqlRow>(
        "SELECT * FROM webhook_outbox WHERE sentinel_id = ANY($1::text[]) ORDER BY created_at, request_id",
        [ids],
      );
      const rows = sqlRows.map(toRecord);
      const { rows: traceRows } = await db.query<{
        sentinel_id: string;
        accepted: string;
        removed: string;
        event_ids: string[];
      }>("SELECT sentinel_id, accepted, removed, event_ids FROM webhook_traces WHERE sentinel_id = ANY($1::text[])", [
        ids,
      ]);
      const stored = new Map(traceRows.map((t) => [t.sentinel_id, t]));
      const traces: TraceTransferRecord[] = [];
      for (const sentinelId of ids) {
        const t = stored.get(sentinelId);
        const own = rows.filter((r) => r.sentinelId === sentinelId).length;
        if (!t && own === 0) continue;
        const removed = Number(t?.removed ?? 0);
        traces.push({
          type: "trace",
          sentinelId,
          accepted: Math.max(Number(t?.accepted ?? 0), own + removed),
          removed,
          eventIds: t?.event_ids ?? [],
        });
      }
      return { records: [...secrets, ...rows, ...traces], summary: summarize({ secrets, rows, traces }) };
    },

    async import(records) {
      const { secrets, rows, traces } = parseTransferRecords(records);
      await migrated();
      const sealed = secrets.map((s) => ({ ...s, sealed: db.seal(s.secret) }));
      return db.tx(async (sql) => {
        let addedSecrets = 0;
        for (const s of sealed) {
          const r = await sql.query(
            "INSERT INTO webhook_secrets (ref, sentinel_id, sealed, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            [s.ref, s.sentinelId, s.sealed, s.createdAt],
          );
          addedSecrets += r.rowCount;
        }
        const added: RowTransferRecord[] = [];
        for (const row of rows) {
          const body = Buffer.from(row.body, "base64");
          const r = await sql.query(
            `INSERT INTO webhook_outbox (request_id, sentinel_id, event_id, body, body_sha256, status, dead_reason,
               attempts, last_error, last_at, created_at, updated_at, seen, replays, replayed_at)
             SELECT $1::text, $2::text, $3::text, $4::bytea, $5::text, $6::text, $7::text, $8::int, $9::text, $10::bigint,
                    $11::bigint, $12::bigint, $13::boolean, $14::int, $15::bigint
             WHERE NOT EXISTS (SELECT 1 FROM webhook_traces WHERE sentinel_id = $2 AND event_ids ? $3)
             ON CONFLICT DO NOTHING`,
            [
              row.requestId,
              row.sentinelId,
              row.eventId,
              body,
              sha256(body),
              row.status,
              row.deadReason ?? null,
              row.attempts,
              row.lastError,
              row.lastAt,
              row.createdAt,
              row.updatedAt,
              row.seen,
              row.replays ?? 0,
              row.replayedAt ?? null,
            ],
          );
          if (r.rowCount === 0) continue;
          added.push(row);
          if (row.status === "pending") await jobs().add(sql, deliveryJobOf(row.requestId));
        }
        const addedTraces: TraceTransferRecord[] = [];
        for (const t of traces) {
          const r = await sql.query(
            "INSERT INTO webhook_traces (sentinel_id, accepted, removed, event_ids) VALUES ($1, $2, $3, $4::jsonb) ON CONFLICT DO NOTHING",
            [t.sentinelId, t.accepted, t.removed, JSON.stringify(t.eventIds)],
          );
          if (r.rowCount > 0) addedTraces.push(t);
        }
        return { ...summarize({ secrets: [], rows: added, traces: addedTraces }), secrets: addedSecrets };
      });
    },
  };
}

function toRecord(r: OutboxSqlRow): RowTransferRecord {
  if (sha256(r.body) !== r.body_sha256)
    throw new SvcError(
      "internal",
      `the stored body of outbox row ${r.request_id} (sentinel ${r.sentinel_id}, event ${r.event_id}) does not match its sha256; nothing was exported`,
    );
  return {
    type: "row",
    sentinelId: r.sentinel_id,
    requestId: r.request_id,
    eventId: r.event_id,
    status: r.status,
    ...(r.dead_reason ? { deadReason: r.dead_reason } : {}),
    attempts: r.attempts,
    lastError: r.last_error,
    lastAt: num(r.last_at),
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    seen: r.seen,
    ...(r.replays > 0 ? { replays: r.replays } : {}),
    ...(r.replayed_at !== null ? { replayedAt: Number(r.replayed_at) } : {}),
    body: r.body.toString("base64"),
  };
}
