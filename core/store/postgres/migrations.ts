/**
 * Versioned migrations per owner (`core`, `webhook-target`, …) in `svc_schema_versions`, applied
 * in one transaction under a team-wide advisory lock, so two daemons starting together migrate
 * once. A database newer than the code is refused before anything is written.
 */
import { SvcError } from "../../errors.js";
import type { TeamDatabase } from "../../plugin-api/team.js";
import { SVC_VERSION } from "../../version.js";

const LOCK_KEY = 7_310_330_001;

export async function runMigrations(db: TeamDatabase, owner: string, migrations: readonly string[]): Promise<void> {
  await db.tx(async (sql) => {
    await sql.query("SELECT pg_advisory_xact_lock($1)", [LOCK_KEY]);
    await sql.query(
      `CREATE TABLE IF NOT EXISTS svc_schema_versions (
         owner text PRIMARY KEY,
         version integer NOT NULL,
         svc_version text NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const { rows } = await sql.query<{ version: number; svc_version: string }>(
      "SELECT version, svc_version FROM svc_schema_versions WHERE owner = $1",
      [owner],
    );
    const current = rows[0]?.version ?? 0;
    if (current > migrations.length)
      throw new SvcError(
        "store_schema_newer",
        `the team store's ${owner} schema is version ${current} (written by svc ${rows[0]!.svc_version}), newer than this svc ${SVC_VERSION} knows (${migrations.length}): upgrade svc on this machine before it joins the team`,
      );
    for (let v = current + 1; v <= migrations.length; v++) await sql.query(migrations[v - 1]!);
    if (migrations.length > current)
      await sql.query(
        `INSERT INTO svc_schema_versions (owner, version, svc_version) VALUES ($1, $2, $3)
         ON CONFLICT (owner) DO UPDATE SET version = EXCLUDED.version, svc_version = EXCLUDED.svc_version, applied_at = now()`,
        [owner, migrations.length, SVC_VERSION],
      );
  });
}
