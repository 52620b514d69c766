/**
 * The team's job queue ({@link TeamJobs}, host service `teamJobs`) on graphile-worker: jobs are
 * rows of the `graphile_worker` schema, added inside the caller's transaction (a job exists only
 * if the records it acts on committed), picked up through graphile-worker's LISTEN/NOTIFY within
 * milliseconds, each held by one daemon at a time. Every job this daemon holds is locked by an id
 * starting with `<daemonId>/`: the dead-daemon sweep (core/store/postgres/leases) force-unlocks a
 * dead daemon's jobs by that prefix, and another daemon runs them. Loaded only in team mode.
 */
import {
  Logger as WorkerLogger,
  run,
  runMigrations,
  type Runner,
  type WorkerEvents,
  type WorkerPool,
} from "graphile-worker";
import { EventEmitter } from "node:events";
import pg from "pg";
import type { DependencyContainer } from "tsyringe";
import type { TeamDatabase, TeamJob, TeamJobs } from "../../plugin-api/team.js";
import { registerValue } from "../../runtime/inject.js";
import type { Logger } from "../../runtime/logger.js";
import { SERVICES, resolve, token } from "../../tokens.js";
import { storeError } from "./errors.js";

export interface TeamJobsOptions {
  /** The team store's URL (graphile-worker gets a pool of its own). */
  url: string;
  logger: Logger;
  /** Connections of that pool (default 8). */
  max?: number;
  /** How often idle workers look for jobs due later (retries' `runAt`; default 200 ms). */
  pollIntervalMs?: number;
  /** First wait before a worker pool that stopped on its own is started again (default 1 s, doubling to 30 s). */
  restartDelayMs?: number;
  /**
   * A task's workers where no job started or ended for this long while one has been due this long
   * are taken for stalled and started again (default 30 s).
   */
  stallAfterMs?: number;
  /** Told of each worker pool this queue starts (observation: a test stops one as a fatal error would). */
  onPool?: (pool: WorkerPool) => void;
}

export interface OpenTeamJobs extends TeamJobs {
  /** Stops every worker (jobs in progress finish, jobs fetched but not started are given back), then the pool. */
  stop(): Promise<void>;
}

/** A run that keeps failing is given up after this many tries (its handler threw each time). */
const MAX_ATTEMPTS = 25;
/** Serializes graphile-worker's migrations between daemons starting together. */
const MIGRATION_LOCK = 0x73766a6f; // "svjo"

/** How long a pool that began to shut down on its own gets to finish before a new one starts. */
const SHUTDOWN_GRACE_MS = 10_000;

/** A job of task $1 due for more than $2 ms that no worker holds (the stall watchdog's question). */
const STALLED_JOB = `SELECT 1 FROM graphile_worker._private_jobs j
  JOIN graphile_worker._private_tasks t ON t.id = j.task_id
  WHERE t.identifier = $1 AND j.locked_at IS NULL AND j.attempts < j.max_attempts
    AND j.run_at < now() - make_interval(secs => $2::double precision / 1000)
  LIMIT 1`;

/** The id prefix that marks this daemon's locks on jobs (the lease sweep's contract). */
export const jobLockPrefix = (daemonId: string): string => `${daemonId}/`;

/** Opens the queue: graphile-worker's schema is migrated (once per team, under a lock) before this resolves. */
export async function openTeamJobs(db: Pick<TeamDatabase, "daemonId">, opts: TeamJobsOptions): Promise<OpenTeamJobs> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 8,
    connectionTimeoutMillis: 5_000,
    // No statement of the queue takes long: one that hangs (a connection lost without a reset) errors instead.
    query_timeout: 60_000,
    keepAlive: true,
    application_name: `svc ${db.daemonId} jobs`,
  });
  const lost = (err: Error) => opts.logger.warn("team job queue connection lost", { error: err.message });
  // An idle or checked-out client's error (the server restarting) must not crash the daemon.
  pool.on("error", lost);
  pool.on("connect", (client) => client.on("error", lost));
  const logger = workerLogger(opts.logger);
  try {
    const lock = await pool.connect();
    try {
      await lock.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      await runMigrations({ pgPool: pool, logger });
    } finally {
      await lock.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]).catch(() => undefined);
      lock.release();
    }
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw storeError(err, opts.url);
  }
  const runners = new Set<Runner>();
  const add: TeamJobs["add"] = async (sql, job) => {
    await sql.query("SELECT graphile_worker.add_job($1, $2::json, run_at => $3, job_key => $4, max_attempts => $5)", [
      job.task,
      JSON.stringify(job.payload),
      job.runAt ?? null,
      job.key ?? null,
      MAX_ATTEMPTS,
    ]);
  };
  let stopped = false;

  return {
    add,

    async ensure(sql, jobs) {
      if (jobs.length === 0) return [];
      // Locked here, a waiting job cannot be taken by a worker (they skip locked rows) while it is judged.
      const { rows } = await sql.query<{
        key: string;
        run_at: Date;
        locked_at: Date | null;
        attempts: number;
        max_attempts: number;
      }>(
        "SELECT key, run_at, locked_at, attempts, max_attempts FROM graphile_worker._private_jobs WHERE key = ANY($1) FOR UPDATE",
        [jobs.map((j) => j.key)],
      );
      const byKey = new Map(rows.map((r) => [r.key, r]));
      const added: string[] = [];
      for (const job of jobs) {
        const had = byKey.get(job.key);
        const running = had?.locked_at != null;
        const dueInTime =
          had !== undefined && had.attempts < had.max_attempts && had.run_at.getTime() <= job.runBy.getTime();
        if (running || dueInTime) continue;
        await add(sql, { task: job.task, payload: job.payload, key: job.key });
        added.push(job.key);
      }
      return added;
    },

    async work(task, handler, { concurrency }) {
      if (stopped) return async () => undefined;
      let ended = false;
      let current: Runner | undefined;
      let retry: NodeJS.Timeout | undefined;
      const firstWait = opts.restartDelayMs ?? 1_000;
      let wait = firstWait;
      /** When a job of this task last started or ended here (the stall watchdog's evidence). */
      let lastProgress = Date.now();

      const start = async (): Promise<void> => {
        const events: WorkerEvents = new EventEmitter();
        let poolId: string | undefined;
        // graphile-worker locks jobs with its pool's id (`pool-<random>`); emitted synchronously before
        // any job is fetched, this makes every lock this daemon takes carry its id.
        events.on("pool:create", ({ workerPool }) => {
          poolId = (workerPool as { id: string }).id = `${jobLockPrefix(db.daemonId)}${workerPool.id}`;
          opts.onPool?.(workerPool);
        });
        const runner = await run({
          pgPool: pool,
          logger,
          events,
          concurrency,
          noHandleSignals: true,
          pollInterval: opts.pollIntervalMs ?? 200,
          // Jobs are fetched in batches (one query feeds many workers), small enough that the other daemons get their share.
          // Completions and failures go through graphile's batcher: unbatched, a failed write is an
          // unhandled rejection that ends the daemon; batched, it shuts the pool down (see restartLater).
          preset: {
            worker: { localQueue: { size: Math.min(concurrency, 32) }, completeJobBatchDelay: 0, failJobBatchDelay: 0 },
          },
          taskList: {
            [task]: async (payload, helpers) => {
              const job: TeamJob = { id: String(helpers.job.id), attempts: helpers.job.attempts };
              lastProgress = Date.now();
              try {
                await handler((payload ?? {}) as Record<string, unknown>, job);
              } finally {
                lastProgress = Date.now();
              }
            },
          },
        });
        if (ended || stopped) return void (await runner.stop().catch(() => undefined));
        current = runner;
        lastProgress = Date.now();
        runners.add(runner);
        const startedAt = Date.now();
        let over = false;
        const onEnd = (reason: string) => {
          if (over) return;
          over = true;
          runners.delete(runner);
          if (ended || stopped) return;
          // A pool that ran a good while before it stopped starts again soon; one that keeps stopping, ever later.
          if (Date.now() - startedAt > 60_000) wait = firstWait;
          opts.logger.error("team job queue stopped on its own; starting it again", {
            task,
            reason,
            restartInMs: wait,
          });
          restartLater(poolId);
        };
        runner.promise.then(
          () => onEnd("its worker pool stopped"),
          (err: Error) => onEnd(err.message),
        );
        // A pool shutting down may never settle (a worker stuck, its jobs not given back): it takes
        // no job any more, so a new one starts once it settles or after a grace, whichever is first.
        events.on("pool:gracefulShutdown", ({ message }) => {
          if (ended || stopped) return;
          const grace = new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS).unref());
          void Promise.race([runner.promise.catch(() => undefined), grace]).then(() =>
            onEnd(`its workers shut down: ${message}`),
          );
        });
      };

      /**
       * A pool stops on its own when it could not record a finished job: graphile-worker 0.17.3's
       * completion batcher rethrows on its first failure (its retry loop never retries), so one
       * completion that meets a PostgreSQL restart is enough. Jobs it could not complete, fail or
       * give back stay locked by it, for hours; the daemon is alive, so no sweep releases them:
       * they are unlocked here, and a new pool runs.
       */
      const restartLater = (poolId: string | undefined): void => {
        retry = setTimeout(async () => {
          if (ended || stopped) return;
          try {
            if (poolId) await pool.query("SELECT graphile_worker.force_unlock_workers($1::text[])", [[poolId]]);
            await start();
          } catch (err) {
            if (ended || stopped) return;
            opts.logger.warn("could not start the team job queue again; retrying", {
              task,
              error: (err as Error).message,
              retryInMs: wait,
            });
            restartLater(poolId);
          }
        }, wait);
        retry.unref();
        wait = Math.min(wait * 2, 30_000);
      };

      /**
       * graphile-worker's workers can also stop taking jobs after PostgreSQL went away without
       * their pool ending (graphile/worker#185): jobs stay due, unlocked, for good. Seen here
       * (five minutes, both daemons) before the shutdown handling above existed; this net covers
       * any other way to get there. Workers where no job started or ended for `stallMs` while a
       * job has been due that long are stalled (idle, or every one stuck): the pool is stopped
       * (graphile fails what it could not finish) and its end starts a new one (above).
       */
      const stallMs = opts.stallAfterMs ?? 30_000;
      let checking = false;
      const checkStall = async () => {
        if (stopped) return clearInterval(watchdog);
        const runner = current;
        if (!runner || checking || Date.now() - lastProgress < stallMs) return;
        checking = true;
        try {
          const { rows } = await pool.query(STALLED_JOB, [task, stallMs]);
          if (rows.length === 0 || runner !== current || ended || stopped) return;
          lastProgress = Date.now();
          opts.logger.error("team job queue took no job though jobs are due; starting it again", {
            task,
            idleMs: stallMs,
          });
          await runner.stop();
        } catch (err) {
          opts.logger.debug("team job queue stall check failed", { task, error: (err as Error).message });
        } finally {
          checking = false;
        }
      };
      const watchdog = setInterval(() => void checkStall(), Math.max(Math.floor(stallMs / 3), 50));
      watchdog.unref();

      await start();
      return async () => {
        ended = true;
        clearInterval(watchdog);
        clearTimeout(retry);
        if (current) runners.delete(current);
        await current?.stop().catch(() => undefined);
      };
    },

    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all([...runners].map((r) => r.stop().catch(() => undefined)));
      await pool.end().catch(() => undefined);
    },
  };
}

/** graphile-worker's log lines into the daemon's logger (its chatter at debug). */
function workerLogger(log: Logger): WorkerLogger {
  return new WorkerLogger(() => (level, message) => {
    const fields = { source: "graphile-worker" };
    if (level === "error") log.error(message, fields);
    else if (level === "warning") log.warn(message, fields);
    else log.debug(message, fields);
  });
}

/**
 * Team mode's start (the store module calls it once the database is open): opens the queue and
 * offers it as the host service `teamJobs`. The caller stops it before closing the database.
 */
export async function provideTeamJobs(
  c: DependencyContainer,
  o: { db: Pick<TeamDatabase, "daemonId">; url: string; logger: Logger },
): Promise<OpenTeamJobs> {
  const jobs = await openTeamJobs(o.db, { url: o.url, logger: o.logger });
  registerValue(c, TEAM_JOBS, jobs);
  resolve(c, SERVICES).provide("teamJobs", jobs);
  return jobs;
}

/** The open queue (team mode only), for the store module's stop. */
export const TEAM_JOBS = token<OpenTeamJobs>("teamJobs");
