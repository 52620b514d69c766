/**
 * `svc doctor` on a team store (PostgreSQL): opens it read-only with the team key, then gathers
 * the store's own check (core/store/postgres/check.ts) and each target's check given
 * `teamDatabase`. Loaded only when the configured store is PostgreSQL (it loads `pg`).
 */
import type { SentinelView } from "../plugin-api/context.js";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { createLogger } from "../runtime/logger.js";
import { checkSchemaVersions, checkStoredSentinels, checkTeamDaemons } from "../store/postgres/check.js";
import { describeStore } from "../store/postgres/errors.js";
import { openReadOnlyTeamDatabase } from "../store/postgres/read-only.js";
import type { ConfigSnapshot } from "../config/config-service.js";
import { teamKeyOf } from "../store/migrate/team-settings.js";
import { checkTargets } from "./target-checks.js";

export async function checkTeamStore(opts: {
  home: string;
  url: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The home's configuration (undefined when config.json does not load: then only the env names the key). */
  config: Pick<ConfigSnapshot, "effective" | "sources"> | undefined;
}): Promise<{ findings: DoctorFinding[]; sentinels: SentinelView[] }> {
  const where = describeStore(opts.url);
  const findings: DoctorFinding[] = [];
  let key: Buffer | undefined;
  try {
    key = await teamKeyOf(
      opts.config ?? { effective: {} as ConfigSnapshot["effective"], sources: {} },
      opts.env,
      opts.home,
    );
  } catch (err) {
    findings.push({
      severity: "error",
      file: "team key",
      message: `${(err as Error).message}; a daemon refuses to start in team mode without it, and the stored secrets were not checked`,
      fix: "give this machine the team's key (the same on every daemon of the team)",
    });
  }
  let db: Awaited<ReturnType<typeof openReadOnlyTeamDatabase>>;
  try {
    db = await openReadOnlyTeamDatabase({ url: opts.url, key, logger: createLogger({ level: "error" }) });
  } catch (err) {
    findings.push({
      severity: "error",
      file: "team store",
      message: `the team store at ${where} does not answer: ${(err as Error).message}`,
      fix: "check store.url (or SVC_STORE_URL), that the server runs and takes connections from here, and the password (PGPASSWORD or ~/.pgpass)",
    });
    return { findings, sentinels: [] };
  }
  try {
    const stored = await checkStoredSentinels(db);
    findings.push(...stored.findings);
    findings.push(...(await checkTargets(opts.home, stored.sentinels, opts.env, opts.cwd, { teamDatabase: db })));
    findings.push(...(await checkSchemaVersions(db, db.known)));
    findings.push(...(await checkTeamDaemons(db)));
    return { findings, sentinels: stored.sentinels };
  } finally {
    await db.close();
  }
}
