/**
 * The webhook target's check of its tables in the team store, for `svc doctor` (read-only: the
 * doctor's database refuses writes, and its `migrate` only compares versions): every stored secret
 * opens with the team key and every webhook sentinel's secret is there (./team-vault-check.ts),
 * every pending row's body matches its sha256. Messages name sentinels and refs, never a secret or a body.
 */
import type { DoctorFinding, SentinelView, TeamDatabase } from "../../../core/plugin-api/index.js";
import { SvcError } from "../../../core/plugin-api/index.js";
import { WEBHOOK_MIGRATIONS, WEBHOOK_OWNER } from "./schema.js";
import { checkTeamVault } from "./team-vault-check.js";

/** Rows named one by one at most; the rest are counted. */
const NAMED_MAX = 20;

export async function checkTeamTables(db: TeamDatabase, sentinels: readonly SentinelView[]): Promise<DoctorFinding[]> {
  try {
    await db.migrate(WEBHOOK_OWNER, WEBHOOK_MIGRATIONS);
  } catch (err) {
    // A newer schema: the store's own check says so; nothing here can be read safely.
    if (SvcError.is(err) && err.code === "store_schema_newer") return [];
    throw err;
  }
  const has = await db.query<{ t: string | null }>("SELECT to_regclass('webhook_outbox')::text AS t");
  // No tables yet (no webhook record was ever stored here): every webhook sentinel lacks its secret.
  return [...(await checkTeamVault(db, sentinels)), ...(has.rows[0]?.t ? await checkPendingBodies(db) : [])];
}

async function checkPendingBodies(db: TeamDatabase): Promise<DoctorFinding[]> {
  const file = "webhook_outbox (team store)";
  const out: DoctorFinding[] = [];
  const bad = await db.query<{ request_id: string; sentinel_id: string; event_id: string }>(
    `SELECT request_id, sentinel_id, event_id FROM webhook_outbox
      WHERE status = 'pending' AND encode(sha256(body), 'hex') <> body_sha256
      ORDER BY created_at LIMIT ${NAMED_MAX + 1}`,
  );
  for (const r of bad.rows.slice(0, NAMED_MAX))
    out.push({
      severity: "error",
      file,
      message: `the body of pending row ${r.request_id} (sentinel ${r.sentinel_id}, event ${r.event_id}) fails its sha256: that event can no longer be delivered`,
      fix: "push the event again from its source if still wanted; the row ends dead (delivered_rejected) when its delivery is next tried",
    });
  if (bad.rows.length > NAMED_MAX)
    out.push({
      severity: "error",
      file,
      message: "more pending rows fail their sha256 than are named here",
      fix: "as above",
    });
  const pending = await db.query<{ n: string }>(
    "SELECT count(*)::text AS n FROM webhook_outbox WHERE status = 'pending'",
  );
  const n = Number(pending.rows[0]?.n ?? 0);
  if (n > 0)
    out.push({
      severity: "info",
      file,
      message: `${n} delivery row(s) pending: the team's daemons send them`,
      fix: "nothing to do (svc status shows them per sentinel while a daemon runs)",
    });
  return out;
}
