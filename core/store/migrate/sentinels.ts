/**
 * The sentinel records moved by `svc store migrate`: `sentinels.json` ⇄ `svc_sentinels`. Ids
 * already at the destination are kept as they are and counted as skipped, so a run cut short is
 * finished by running it again.
 */
import { SvcError } from "../../errors.js";
import type { TeamSql } from "../../plugin-api/team.js";
import type { SentinelRecord } from "../../sentinels/service.js";
import { SentinelStore } from "../../sentinels/store.js";
import { SENTINELS_CHANNEL } from "../postgres/core-schema.js";

export interface CopyCount {
  copied: number;
  /** Already at the destination (kept, never overwritten). */
  skipped: number;
}

/** The records of `sentinels.json` (none when it does not exist; a damaged file is refused). */
export async function fileSentinels(home: string): Promise<SentinelRecord[]> {
  return new SentinelStore(home).load();
}

/** The records of `svc_sentinels`; a row that holds no sentinel record is refused before anything is written. */
export async function tableSentinels(sql: TeamSql): Promise<SentinelRecord[]> {
  const { rows } = await sql.query<{ id: string; record: SentinelRecord | null }>(
    "SELECT id, record FROM svc_sentinels ORDER BY id",
  );
  for (const r of rows)
    if (r.record?.id !== r.id || typeof r.record.spec !== "object")
      throw new SvcError(
        "invalid_input",
        `the team store's row of sentinel ${r.id} does not hold a sentinel record: nothing was copied (svc doctor on the team store says more)`,
      );
  return rows.map((r) => r.record!);
}

/** Inserts the records into `svc_sentinels` in one transaction. */
export async function copySentinelsToTable(
  db: { tx<T>(fn: (sql: TeamSql) => Promise<T>): Promise<T> },
  records: readonly SentinelRecord[],
): Promise<CopyCount> {
  return db.tx(async (sql) => {
    let copied = 0;
    for (const r of records) {
      const res = await sql.query(
        "INSERT INTO svc_sentinels (id, record) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING",
        [r.id, JSON.stringify(r)],
      );
      copied += res.rowCount;
    }
    return { copied, skipped: records.length - copied };
  });
}

/** Tells the team's running daemons to reload their sentinels (payload `*`). */
export async function notifySentinelsChanged(sql: TeamSql): Promise<void> {
  await sql.query("SELECT pg_notify($1, '*')", [SENTINELS_CHANNEL]);
}

/** Adds the records to `sentinels.json` (one durable write per group of inserts). */
export async function copySentinelsToFile(home: string, records: readonly SentinelRecord[]): Promise<CopyCount> {
  const store = new SentinelStore(home);
  await store.load();
  const fresh = records.filter((r) => store.get(r.id) === undefined);
  const results = await Promise.allSettled(fresh.map((r) => store.insert(r)));
  const failed = results.find(
    (r): r is PromiseRejectedResult =>
      r.status === "rejected" && !(SvcError.is(r.reason) && r.reason.code === "conflict"),
  );
  if (failed) throw failed.reason;
  const copied = results.filter((r) => r.status === "fulfilled").length;
  return { copied, skipped: records.length - copied };
}
