import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import type { WorkerPool } from "graphile-worker";
import {
  jobLockPrefix,
  openTeamJobs,
  type OpenTeamJobs,
  type TeamJobsOptions,
} from "../../../../core/store/postgres/jobs.js";
import { createLogger } from "../../../../core/runtime/logger.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";
import { until } from "../../../support/until.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

describe.skipIf(!!missing)("team job queue (graphile-worker)", () => {
  let server: PostgresServer;
  const logger = createLogger({ level: "error" });
  const open: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = [];

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    for (const o of open.reverse()) await ("stop" in o ? o.stop() : o.close()).catch(() => undefined);
    await server?.destroy();
  });

  /** One daemon's database and queue on a fresh database `name`. */
  const daemon = async (
    name: string,
    id: string,
    extra: Partial<TeamJobsOptions> = {},
  ): Promise<{ db: OpenTeamDatabase; jobs: OpenTeamJobs }> => {
    const url = server.url(name);
    const db = await openTeamDatabase({ url, key: randomBytes(32), daemonId: id, logger });
    open.push(db);
    const jobs = await openTeamJobs(db, { url, logger, ...extra });
    open.push(jobs);
    return { db, jobs };
  };

  it("runs a job added in a committed transaction once, and never one whose transaction rolled back", async () => {
    await server.createDatabase("commit");
    const { db, jobs } = await daemon("commit", "a-1");
    const ran: string[] = [];
    const locks: string[] = [];
    await jobs.work(
      "t",
      async (payload) => {
        const r = await db.query<{ locked_by: string }>("SELECT locked_by FROM graphile_worker.jobs");
        locks.push(...r.rows.map((row) => row.locked_by));
        ran.push(String(payload.n));
      },
      { concurrency: 2 },
    );
    await expect(
      db.tx(async (sql) => {
        await jobs.add(sql, { task: "t", payload: { n: "rolled-back" } });
        throw new Error("abandon");
      }),
    ).rejects.toThrow("abandon");
    await db.tx((sql) => jobs.add(sql, { task: "t", payload: { n: "committed" }, key: "k1" }));
    await until(() => (ran.length >= 1 ? true : undefined), "the committed job to run");
    await until(
      async () => ((await db.query("SELECT 1 FROM graphile_worker.jobs")).rowCount === 0 ? true : undefined),
      "the queue to empty",
    );
    expect(ran).toEqual(["committed"]);
    // Locks carry the daemon's id: the dead-daemon sweep unlocks by that prefix.
    expect(locks.length).toBeGreaterThan(0);
    for (const l of locks) expect(l.startsWith("a-1/")).toBe(true);
  });

  it("two daemons on two pools share 200 jobs, each run exactly once", async () => {
    await server.createDatabase("share");
    const a = await daemon("share", "a-2");
    const b = await daemon("share", "b-2");
    const runs = new Map<number, string[]>();
    const handler = (who: string) => async (payload: Record<string, unknown>) => {
      await new Promise((r) => setImmediate(r));
      const n = payload.n as number;
      runs.set(n, [...(runs.get(n) ?? []), who]);
    };
    await a.jobs.work("share", handler("a"), { concurrency: 4 });
    await b.jobs.work("share", handler("b"), { concurrency: 4 });
    await a.db.tx(async (sql) => {
      for (let n = 0; n < 100; n++) await a.jobs.add(sql, { task: "share", payload: { n } });
    });
    await b.db.tx(async (sql) => {
      for (let n = 100; n < 200; n++) await b.jobs.add(sql, { task: "share", payload: { n } });
    });
    await until(() => (runs.size === 200 ? true : undefined), "200 jobs to run", 60_000);
    await until(
      async () => ((await a.db.query("SELECT 1 FROM graphile_worker.jobs")).rowCount === 0 ? true : undefined),
      "the queue to empty",
    );
    expect([...runs.values()].every((who) => who.length === 1)).toBe(true);
    const by = [...runs.values()].flat();
    expect(by.includes("a") && by.includes("b")).toBe(true);
  });

  it("a job due later runs once its time comes, and a second add with the same key replaces the waiting one", async () => {
    await server.createDatabase("later");
    const { db, jobs } = await daemon("later", "a-3");
    const ran: unknown[] = [];
    await jobs.work("later", async (payload) => void ran.push(payload.v), { concurrency: 1 });
    const runAt = new Date(Date.now() + 300);
    await db.tx((sql) => jobs.add(sql, { task: "later", payload: { v: 1 }, key: "same", runAt }));
    await db.tx((sql) => jobs.add(sql, { task: "later", payload: { v: 2 }, key: "same", runAt }));
    await until(() => (ran.length > 0 ? true : undefined), "the keyed job to run");
    await until(
      async () => ((await db.query("SELECT 1 FROM graphile_worker.jobs")).rowCount === 0 ? true : undefined),
      "the queue to empty",
    );
    expect(ran).toEqual([2]);
  });

  it("stops gracefully: a job in progress finishes before stop resolves", async () => {
    await server.createDatabase("stop");
    const { db, jobs } = await daemon("stop", "a-4");
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started = false;
    let finished = false;
    await jobs.work(
      "slow",
      async () => {
        started = true;
        await gate;
        finished = true;
      },
      { concurrency: 1 },
    );
    await db.tx((sql) => jobs.add(sql, { task: "slow", payload: {} }));
    await until(() => (started ? true : undefined), "the slow job to start");
    const stopping = jobs.stop();
    release();
    await stopping;
    expect(finished).toBe(true);
    expect((await db.query("SELECT 1 FROM graphile_worker.jobs")).rowCount).toBe(0);
  });
  it("a job a dead daemon held runs on another daemon once its locks are released by the daemon-id prefix", async () => {
    await server.createDatabase("dead");
    const { db, jobs } = await daemon("dead", "b-5");
    await db.tx((sql) => jobs.add(sql, { task: "orphan", payload: { v: 1 } }));
    // What a daemon killed mid-job leaves: the job locked by one of its pools.
    await db.query("UPDATE graphile_worker._private_jobs SET locked_by = 'dead-5/pool-1', locked_at = now()");
    const ran: unknown[] = [];
    await jobs.work("orphan", async (payload) => void ran.push(payload.v), { concurrency: 1 });
    // The dead-daemon sweep's release (core/store/postgres leases): every lock under the dead daemon's prefix.
    await db.query(
      `SELECT graphile_worker.force_unlock_workers(ARRAY(
         SELECT DISTINCT locked_by FROM graphile_worker._private_jobs WHERE locked_by LIKE $1))`,
      [`${jobLockPrefix("dead-5")}%`],
    );
    await until(() => (ran.length > 0 ? true : undefined), "the released job to run");
    expect(ran).toEqual([1]);
  });

  it("ensure: leaves a running job and one due in time; adds one missing, given up or due later, due now", async () => {
    await server.createDatabase("ensure");
    const { db, jobs } = await daemon("ensure", "a-6");
    const job = (key: string, runAt?: Date) => ({ task: "e", payload: { key }, key, ...(runAt ? { runAt } : {}) });
    const inAnHour = new Date(Date.now() + 3_600_000);
    await db.tx(async (sql) => {
      for (const key of ["running", "late", "spent"]) await jobs.add(sql, job(key, inAnHour));
      await jobs.add(sql, job("soon", new Date(Date.now() + 1_000)));
    });
    await db.query(
      "UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = 'a-6/pool-x' WHERE key = 'running'",
    );
    await db.query(
      "UPDATE graphile_worker._private_jobs SET attempts = max_attempts, run_at = now() WHERE key = 'spent'",
    );
    const before = await db.query<{ key: string; run_at: Date; revision: number }>(
      "SELECT key, run_at, revision FROM graphile_worker._private_jobs ORDER BY key",
    );
    const runBy = new Date(Date.now() + 5_000);
    const keys = ["running", "soon", "late", "spent", "missing"];
    const added = await db.tx((sql) =>
      jobs.ensure(
        sql,
        keys.map((key) => ({ ...job(key), runBy })),
      ),
    );
    expect(added.sort()).toEqual(["late", "missing", "spent"]);
    const after = await db.query<{
      key: string;
      run_at: Date;
      attempts: number;
      locked_at: Date | null;
      revision: number;
    }>(
      "SELECT key, run_at, attempts, locked_at, revision FROM graphile_worker._private_jobs WHERE key IS NOT NULL ORDER BY key",
    );
    const of = (key: string) => after.rows.find((r) => r.key === key)!;
    for (const key of ["late", "missing", "spent"]) {
      expect(of(key).run_at.getTime(), key).toBeLessThanOrEqual(Date.now() + 1_000);
      expect(of(key).attempts, key).toBe(0);
    }
    const was = (key: string) => before.rows.find((r) => r.key === key)!;
    for (const key of ["running", "soon"]) {
      expect(of(key).run_at.getTime(), key).toBe(was(key).run_at.getTime());
      expect(of(key).revision, key).toBe(was(key).revision);
    }
    expect(of("running").locked_at).not.toBeNull();
    // Nothing to judge: no query, no key.
    expect(await db.tx((sql) => jobs.ensure(sql, []))).toEqual([]);
  });

  it("a worker pool that stops on its own is started again, and the jobs it left locked run", async () => {
    await server.createDatabase("restart");
    const pools: WorkerPool[] = [];
    const { db, jobs } = await daemon("restart", "a-7", { onPool: (p) => pools.push(p), restartDelayMs: 50 });
    const ran: unknown[] = [];
    await jobs.work("r", async (payload) => void ran.push(payload.v), { concurrency: 2 });
    await db.tx((sql) => jobs.add(sql, { task: "r", payload: { v: 1 } }));
    await until(() => (ran.includes(1) ? true : undefined), "the first job to run");
    expect(pools).toHaveLength(1);
    const first = pools[0]!;
    // What a pool that could not complete a job leaves behind: the job locked by it, for hours.
    await db.tx(async (sql) => {
      await jobs.add(sql, { task: "r", payload: { v: 2 }, key: "left" });
      await sql.query("UPDATE graphile_worker._private_jobs SET locked_at = now(), locked_by = $1 WHERE key = 'left'", [
        first.id,
      ]);
    });
    // graphile-worker's answer to a write it could not make after its retries (PostgreSQL away for minutes).
    await first.gracefulShutdown("Could not completeJobs; queue is in an inconsistent state; aborting.");
    await until(() => (pools.length === 2 ? true : undefined), "a new worker pool");
    expect(pools[1]!.id.startsWith(jobLockPrefix("a-7"))).toBe(true);
    expect(pools[1]!.id).not.toBe(first.id);
    await until(() => (ran.includes(2) ? true : undefined), "the job the stopped pool left locked to run");
    await db.tx((sql) => jobs.add(sql, { task: "r", payload: { v: 3 } }));
    await until(() => (ran.includes(3) ? true : undefined), "a new job to run on the new pool");
    expect(ran.sort()).toEqual([1, 2, 3]);
  });

  it("workers that take no job while one is due are taken for stalled and started again", async () => {
    await server.createDatabase("stall");
    const pools: WorkerPool[] = [];
    const { db, jobs } = await daemon("stall", "a-8", {
      onPool: (p) => pools.push(p),
      restartDelayMs: 50,
      stallAfterMs: 400,
    });
    const ran: unknown[] = [];
    await jobs.work("s", async (payload) => void ran.push(payload.v), { concurrency: 2 });
    await db.tx((sql) => jobs.add(sql, { task: "s", payload: { v: 1 } }));
    await until(() => (ran.includes(1) ? true : undefined), "the first job to run");
    // Workers that cannot see a due job (here: its row held by another transaction; workers skip
    // locked rows) look, from the database, like a pool that stopped fetching.
    await db.tx((sql) => jobs.add(sql, { task: "s", payload: { v: 2 }, runAt: new Date(Date.now() + 1_000) }));
    const holder = new pg.Client({ connectionString: server.url("stall") });
    await holder.connect();
    try {
      await holder.query("BEGIN");
      await holder.query("SELECT id FROM graphile_worker._private_jobs FOR UPDATE");
      await until(() => (pools.length >= 2 ? true : undefined), "a new worker pool after the stall", 20_000);
      await holder.query("COMMIT");
    } finally {
      await holder.end();
    }
    await until(() => (ran.includes(2) ? true : undefined), "the due job to run on the new pool");
    expect(pools[1]!.id).not.toBe(pools[0]!.id);
  });

  it("a pool shutting down around a stuck job is replaced, and the stuck job runs again", async () => {
    await server.createDatabase("stuck");
    const pools: WorkerPool[] = [];
    const { db, jobs } = await daemon("stuck", "a-9", { onPool: (p) => pools.push(p), restartDelayMs: 50 });
    const runs: unknown[] = [];
    await jobs.work(
      "k",
      async (payload) => {
        runs.push(payload.v);
        // The first run of job 1 never ends: its worker is stuck, its job locked by the pool.
        if (payload.v === 1 && runs.filter((v) => v === 1).length === 1) await new Promise(() => undefined);
      },
      { concurrency: 1 },
    );
    await db.tx((sql) => jobs.add(sql, { task: "k", payload: { v: 1 } }));
    await until(() => (runs.includes(1) ? true : undefined), "job 1 to start");
    void Promise.resolve(pools[0]!.gracefulShutdown("simulated: the pool shuts down on its own")).catch(
      () => undefined,
    );
    await until(() => (pools.length >= 2 ? true : undefined), "a new worker pool", 30_000);
    await db.tx((sql) => jobs.add(sql, { task: "k", payload: { v: 2 } }));
    await until(() => (runs.includes(2) ? true : undefined), "a new job to run on the new pool");
    await until(() => (runs.filter((v) => v === 1).length >= 2 ? true : undefined), "job 1 to run again", 30_000);
  }, 60_000);
});
