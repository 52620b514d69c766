/**
 * The team store's own check for `svc doctor` (read-only; docs/operations.md, "svc doctor on a
 * team store"): the schema version of each owner against what this svc knows, the sentinel rows,
 * and the daemons of the team. The plugins check their own tables (their `check`, given
 * `teamDatabase`); core/doctor/team-store.ts gathers both.
 */
import type { SentinelView } from "../../plugin-api/context.js";
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import type { TeamSql } from "../../plugin-api/team.js";
import { SVC_VERSION } from "../../version.js";
import { CORE_MIGRATIONS } from "./core-schema.js";

/** A daemon whose heartbeat is older than this is told as gone, not live. */
const LIVE_WITHIN_S = 60;

const exists = async (db: TeamSql, table: string) =>
  !!(await db.query<{ t: string | null }>("SELECT to_regclass($1)::text AS t", [table])).rows[0]?.t;

/** `svc_schema_versions` against `known` (the core's and each loaded plugin's migrations). */
export async function checkSchemaVersions(db: TeamSql, known: ReadonlyMap<string, number>): Promise<DoctorFinding[]> {
  const file = "svc_schema_versions (team store)";
  const knows = new Map(known).set("core", CORE_MIGRATIONS.length);
  if (!(await exists(db, "svc_schema_versions")))
    return [
      {
        severity: "info",
        file,
        message: "the team store holds no svc schema yet",
        fix: "nothing to do: the first daemon start (or svc store migrate --to <url>) creates it",
      },
    ];
  const { rows } = await db.query<{ owner: string; version: number; svc_version: string }>(
    "SELECT owner, version, svc_version FROM svc_schema_versions ORDER BY owner",
  );
  const out: DoctorFinding[] = [];
  for (const r of rows) {
    const mine = knows.get(r.owner);
    if (mine === undefined)
      out.push({
        severity: "info",
        file,
        message: `the tables of "${r.owner}" (schema version ${r.version}, by svc ${r.svc_version}) belong to no plugin this svc loaded`,
        fix: "nothing to do, unless that plugin should be loaded here: svc adapters ls --load",
      });
    else if (r.version > mine)
      out.push({
        severity: "error",
        file,
        message: `the team store's "${r.owner}" schema is version ${r.version} (written by svc ${r.svc_version}), newer than this svc ${SVC_VERSION} knows (${mine}): a daemon of this svc refuses to start on it; upgrade svc`,
        fix: "upgrade svc on this machine to the version the team runs",
      });
    else if (r.version < mine)
      out.push({
        severity: "info",
        file,
        message: `the team store's "${r.owner}" schema is version ${r.version}; this svc ${SVC_VERSION} knows ${mine}`,
        fix: "nothing to do: the next daemon start of this svc migrates it (the other daemons of the team must be upgraded too)",
      });
  }
  return out;
}

/** The sentinel rows (`svc_sentinels`): each must hold the record of its id. */
export async function checkStoredSentinels(
  db: TeamSql,
): Promise<{ findings: DoctorFinding[]; sentinels: SentinelView[] }> {
  if (!(await exists(db, "svc_sentinels"))) return { findings: [], sentinels: [] };
  const { rows } = await db.query<{ id: string; record: unknown }>("SELECT id, record FROM svc_sentinels ORDER BY id");
  const findings: DoctorFinding[] = [];
  const sentinels: SentinelView[] = [];
  for (const { id, record } of rows) {
    const r = record as Partial<SentinelView> | null;
    if (
      r &&
      typeof r === "object" &&
      r.id === id &&
      typeof r.status === "string" &&
      r.spec &&
      typeof r.spec === "object"
    )
      sentinels.push(r as SentinelView);
    else
      findings.push({
        severity: "error",
        file: "svc_sentinels (team store)",
        message: `the row of sentinel ${id} does not hold a sentinel record (an id, status and spec): the daemons cannot load it`,
        fix: `fix the row by hand, or delete it and create the sentinel again (DELETE FROM svc_sentinels WHERE id = '${id}')`,
      });
  }
  return { findings, sentinels };
}

/** The daemons of the team (`svc_daemons`): those whose heartbeat is recent, and those gone. */
export async function checkTeamDaemons(db: TeamSql): Promise<DoctorFinding[]> {
  if (!(await exists(db, "svc_daemons"))) return [];
  const { rows } = await db.query<{ id: string; host: string; pid: number; svc_version: string; age: number }>(
    "SELECT id, host, pid, svc_version, extract(epoch FROM now() - heartbeat_at)::float8 AS age FROM svc_daemons ORDER BY started_at",
  );
  const live = rows.filter((r) => r.age < LIVE_WITHIN_S);
  const out: DoctorFinding[] = [
    {
      severity: "info",
      file: "svc_daemons (team store)",
      message:
        live.length === 0
          ? "no daemon of the team is running (no heartbeat in the last minute)"
          : `${live.length} daemon${live.length === 1 ? "" : "s"} of the team running: ${live.map((r) => `${r.host} pid ${r.pid} (svc ${r.svc_version})`).join(", ")}`,
      fix: "nothing to do",
    },
  ];
  const older = live.filter((r) => r.svc_version !== SVC_VERSION);
  if (older.length > 0)
    out.push({
      severity: "info",
      file: "svc_daemons (team store)",
      message: `daemons of the team run another svc than this ${SVC_VERSION}: ${older.map((r) => `${r.host} (svc ${r.svc_version})`).join(", ")}`,
      fix: "run one svc version across the team",
    });
  return out;
}
