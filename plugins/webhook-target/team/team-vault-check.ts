/**
 * The team vault's check for `svc doctor` (read-only: SELECTs only): every stored secret opens
 * with this daemon's team key, and the table holds the secret of every webhook sentinel. Messages
 * never quote a secret. The file vault's check is ../vault-check.ts.
 */
import type { DoctorFinding, SentinelView, TeamDatabase } from "../../../core/plugin-api/index.js";
import { SvcError } from "../../../core/plugin-api/index.js";
import { refFindings } from "../vault-check.js";

/** How findings name the table (a `file` of the doctor's report). */
export const TEAM_VAULT_WHERE = "webhook_secrets (team store)";

/** Secrets named one by one at most; the rest are counted. */
const NAMED_MAX = 20;

export async function checkTeamVault(db: TeamDatabase, sentinels: readonly SentinelView[]): Promise<DoctorFinding[]> {
  const { rows: exists } = await db.query<{ t: string | null }>("SELECT to_regclass('webhook_secrets')::text AS t");
  const rows = exists[0]?.t
    ? (
        await db.query<{ ref: string; sentinel_id: string; sealed: Buffer }>(
          "SELECT ref, sentinel_id, sealed FROM webhook_secrets",
        )
      ).rows
    : [];
  const out: DoctorFinding[] = [];
  const unopened = rows.filter((r) => !opens(db, r.sealed));
  const named = unopened.slice(0, NAMED_MAX).map((r) => `${r.ref} of sentinel ${r.sentinel_id}`);
  if (unopened.length > 0)
    out.push({
      severity: "error",
      file: TEAM_VAULT_WHERE,
      message: `${unopened.length} of ${rows.length} stored webhook secrets do not open with this daemon's team key (${named.join(", ")}${unopened.length > NAMED_MAX ? ", …" : ""}): their deliveries cannot be signed`,
      fix: "give this daemon the team's key (SVC_STORE_KEY, or the key file named by store.keyFile / SVC_STORE_KEY_FILE): every daemon of a team needs the same key",
    });
  const secrets = Object.fromEntries(rows.map((r) => [r.ref, { sentinelId: r.sentinel_id }]));
  out.push(
    ...refFindings(
      TEAM_VAULT_WHERE,
      secrets,
      sentinels,
      "nothing to do: a daemon removes it at its next start once it is 15 minutes old",
    ),
  );
  return out;
}

function opens(db: TeamDatabase, sealed: Buffer): boolean {
  try {
    db.unseal(sealed);
    return true;
  } catch (err) {
    // No key at all (svc doctor without one): the store's own check says so once; nothing is judged.
    if (SvcError.is(err) && err.code === "store_key_missing") return true;
    return false;
  }
}
