/**
 * `svc store migrate --to <postgres URL | file>`: copies a home's records between its files and a
 * team store (docs/team-mode.md, "Moving in and out"): the sentinels, then each target's own
 * records through its `transfer`, then runs `svc doctor`'s checks on both sides. Nothing is
 * deleted from the source; ids already at the destination are kept and counted as skipped, so a
 * run cut short is finished by running it again. Refused before anything is written: a daemon
 * running on this home (its files would change underneath), a password in the URL given on the
 * command line, no team key, a server that does not answer or refuses the login.
 */
import { FileConfigService } from "../../config/file-config-service.js";
import { liveRuntimeInfo } from "../../daemon/runtime-info.js";
import { runDoctor, type DoctorReport } from "../../doctor/doctor.js";
import { offlineTargets } from "../../doctor/offline-targets.js";
import { SvcError } from "../../errors.js";
import type { TeamJobs } from "../../plugin-api/team.js";
import { createLogger } from "../../runtime/logger.js";
import { homeFile } from "../../storage/paths.js";
import { CORE_MIGRATIONS } from "../postgres/core-schema.js";
import { openTeamDatabase } from "../postgres/database.js";
import { checkTeamKey } from "../postgres/key-check.js";
import { describeStore } from "../postgres/errors.js";
import { openReadOnlyTeamDatabase } from "../postgres/read-only.js";
import {
  type CopyCount,
  copySentinelsToFile,
  copySentinelsToTable,
  fileSentinels,
  notifySentinelsChanged,
  tableSentinels,
} from "./sentinels.js";
import { checkTransferable, type TargetTransferReport, transferTargets } from "./targets.js";
import { chooseStore, storeOfConfig } from "../select.js";
import { refusePasswordInArgv, teamKeyOf } from "./team-settings.js";

export interface MigrateResult {
  /** `file <home>` or `postgres <host:port/database>`. */
  from: string;
  to: string;
  sentinels: CopyCount;
  targets: TargetTransferReport[];
  /** `svc doctor`'s checks (records only, not the environment) of both sides, after the copy. */
  checks: { source: DoctorReport; destination: DoctorReport };
  /** No check found an error. */
  healthy: boolean;
}

/** The source side of a team store is only read: a job queue there takes nothing. */
const noJobs: TeamJobs = {
  add: () => Promise.reject(new SvcError("unavailable", "svc store migrate adds no job to the store it copies from")),
  ensure: () =>
    Promise.reject(new SvcError("unavailable", "svc store migrate adds no job to the store it copies from")),
  work: () => Promise.resolve(async () => undefined),
};

export async function migrateStore(
  home: string,
  to: string,
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<MigrateResult> {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const toFile = to === "file";
  if (!toFile) {
    refusePasswordInArgv(to, "--to");
    chooseStore(to, { kind: "flag", name: "--to" });
  }
  const running = await liveRuntimeInfo(home);
  if (running)
    throw new SvcError(
      "daemon_running",
      `an svc daemon is running on ${home} (pid ${running.pid}): its files would change while they are copied; stop it first (svc stop)`,
    );
  const config = (await FileConfigService.open(homeFile(home, "config"), env, {})).current();
  const configured = storeOfConfig(config);
  const url = toFile ? (configured.kind === "postgres" ? configured.url : undefined) : to;
  if (url === undefined)
    throw new SvcError(
      "store_url_invalid",
      "no team store is configured to copy from: set SVC_STORE_URL (or config store.url) to its postgres:// URL",
    );
  const key = await teamKeyOf(config, env, home);
  const where = describeStore(url);
  const logger = createLogger({ level: "error" });
  const started = <T>(p: Promise<T>) =>
    p.catch((err: unknown) => {
      const e = SvcError.is(err) ? err : new SvcError("internal", (err as Error).message, { cause: err });
      throw new SvcError(
        e.code,
        `${e.message}; what was copied stays, and running svc store migrate again copies the rest`,
        { cause: err },
      );
    });

  let sentinels: CopyCount;
  let targets: TargetTransferReport[];
  if (toFile) {
    const db = await openReadOnlyTeamDatabase({ url, key, logger });
    try {
      const records = await tableSentinels(db);
      const team = await offlineTargets({ home, env, cwd, services: { teamDatabase: db, teamJobs: noJobs } });
      const files = await offlineTargets({ home, env, cwd });
      checkTransferable(team.instances, files.instances, records);
      sentinels = await started(copySentinelsToFile(home, records));
      targets = await started(transferTargets(team.instances, files.instances, records));
    } finally {
      await db.close();
    }
  } else {
    const records = await fileSentinels(home);
    const db = await openTeamDatabase({ url, key, daemonId: `migrate-${process.pid}`, logger, max: 4 });
    try {
      await db.migrate("core", CORE_MIGRATIONS);
      // Secrets are sealed with this key: it must be the team's, or the daemons could not open them.
      await checkTeamKey(db);
      // Pending rows get their delivery jobs in the queue (added, never run here: no worker starts).
      const { openTeamJobs } = await import("../postgres/jobs.js");
      const teamJobs = await openTeamJobs(db, { url, logger, max: 2 });
      try {
        const files = await offlineTargets({ home, env, cwd });
        const team = await offlineTargets({ home, env, cwd, services: { teamDatabase: db, teamJobs } });
        checkTransferable(files.instances, team.instances, records);
        sentinels = await started(copySentinelsToTable(db, records));
        targets = await started(transferTargets(files.instances, team.instances, records));
        // Running daemons of the team reload their sentinels once every record is in.
        await started(notifySentinelsChanged(db));
      } finally {
        await teamJobs.stop();
      }
    } finally {
      await db.close();
    }
  }
  const fileChecks = await runDoctor(home, { env, cwd, environment: false, store: "file" });
  const teamChecks = await runDoctor(home, { env, cwd, environment: false, store: { url } });
  const checks = toFile
    ? { source: teamChecks, destination: fileChecks }
    : { source: fileChecks, destination: teamChecks };
  const fileSide = `file ${home}`;
  const teamSide = `postgres ${where}`;
  return {
    from: toFile ? teamSide : fileSide,
    to: toFile ? fileSide : teamSide,
    sentinels,
    targets,
    checks,
    healthy: checks.source.healthy && checks.destination.healthy,
  };
}
