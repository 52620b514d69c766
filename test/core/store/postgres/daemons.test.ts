import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Logger as GraphileLogger, quickAddJob, runMigrations, runOnce } from "graphile-worker";
import { container } from "tsyringe";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { soleLeadership } from "../../../../core/store/leadership.js";
import { leadershipModule } from "../../../../core/store/leadership-module.js";
import { CORE_MIGRATIONS } from "../../../../core/store/postgres/core-schema.js";
import { DaemonRoll } from "../../../../core/store/postgres/daemons.js";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import { PostgresLeadership } from "../../../../core/store/postgres/leases.js";
import { STORE } from "../../../../core/store/tokens.js";
import { ServiceDirectory } from "../../../../core/runtime/service-directory.js";
import { registerValue } from "../../../../core/runtime/inject.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { LOGGER, SERVICES } from "../../../../core/tokens.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";
import { until } from "../../../support/until.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const quiet = new GraphileLogger(() => () => undefined);
const GRAPHILE = pathToFileURL(createRequire(import.meta.url).resolve("graphile-worker")).href;

/**
 * A graphile worker in a process of its own whose task never ends: resolves once it has claimed a
 * job; `kill()` kills it -9 (its claim stays behind). graphile-worker 0.17 claims jobs in its
 * worker pool's name (`locked_by` = the pool's id, `pool-<random>` unless set): the pool is named
 * `workerId` when it is created (its `pool:create` event), as a daemon's job queue names its pools
 * `<daemon id>/…`.
 */
async function hangingWorker(url: string, workerId: string) {
  const script = `
    const { EventEmitter } = await import("node:events");
    const { run, Logger } = await import(${JSON.stringify(GRAPHILE)});
    const events = new EventEmitter();
    events.on("pool:create", ({ workerPool }) => { workerPool.id = process.env.WORKER_ID; });
    await run({
      connectionString: process.env.URL, concurrency: 1, noHandleSignals: true, events,
      logger: new Logger(() => () => undefined), pollInterval: 50,
      taskList: { deliver: () => { console.log("claimed"); return new Promise(() => undefined); } },
    });`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    env: { ...process.env, URL: url, WORKER_ID: workerId },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("claimed") && resolve());
    child.once("exit", (code) => reject(new Error(`the graphile worker exited (${code}) before claiming a job`)));
  });
  return {
    kill: () =>
      new Promise<void>((resolve) => {
        child.removeAllListeners("exit");
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

describe.skipIf(!!missing)("the team's daemons on PostgreSQL", () => {
  let server: PostgresServer;
  let n = 0;
  const open: OpenTeamDatabase[] = [];
  const stops: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
    await Promise.all(open.splice(0).map((db) => db.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await server?.destroy();
  });

  async function database(daemonId = "live") {
    const url = await server.createDatabase(`daemons_${++n}`);
    const logger = createMemoryLogger();
    const db = await openTeamDatabase({ url, key: randomBytes(32), daemonId, logger, max: 3 });
    open.push(db);
    await db.migrate("core", CORE_MIGRATIONS);
    return { url, db, logger };
  }

  const locked = async (db: OpenTeamDatabase) =>
    (await db.query<{ locked_by: string | null }>("SELECT locked_by FROM graphile_worker._private_jobs")).rows.map(
      (r) => r.locked_by,
    );

  it("releases the job claims of a daemon whose heartbeat stopped, and only its", async () => {
    const { url, db, logger } = await database();
    await runMigrations({ connectionString: url, logger: quiet });
    // Two daemons' workers each claim a job for real, then both processes die: "deadDaemon" is long
    // silent, "quietDaemon" beat a moment ago (not dead yet).
    await db.query(
      `INSERT INTO svc_daemons (id, host, pid, svc_version, heartbeat_at) VALUES
         ('deadDaemon', 'h1', 1, '0.0.0', now() - interval '1 minute'), ('quietDaemon', 'h2', 2, '0.0.0', now())`,
    );
    for (const workerId of ["deadDaemon/w1", "quietDaemon/w1"]) {
      await quickAddJob({ connectionString: url, logger: quiet }, "deliver", { to: workerId });
      const worker = await hangingWorker(url, workerId);
      await worker.kill();
    }
    expect((await locked(db)).sort()).toEqual(["deadDaemon/w1", "quietDaemon/w1"]);

    const roll = new DaemonRoll({
      db,
      sweepLease: soleLeadership.lease("team:daemon-sweep"),
      logger,
      version: "1.2.3",
      heartbeatMs: 20,
    });
    await roll.start();
    stops.push(() => roll.stop());
    await until(
      async () => ((await locked(db)).includes("deadDaemon/w1") ? undefined : true),
      "the dead claim released",
    );
    expect(await locked(db)).toEqual(expect.arrayContaining([null, "quietDaemon/w1"]));
    const ids = (await db.query<{ id: string }>("SELECT id FROM svc_daemons ORDER BY id")).rows.map((r) => r.id);
    expect(ids).toEqual(["live", "quietDaemon"]);
    expect(logger.lines.map((l) => JSON.parse(l))).toContainEqual(
      expect.objectContaining({ msg: "dead team daemon's job claims released", daemon: "deadDaemon", jobsReleased: 1 }),
    );

    // Runnable again: a live worker runs the released job (and not the one still claimed).
    const ran: unknown[] = [];
    await runOnce({
      connectionString: url,
      logger: quiet,
      taskList: { deliver: async (payload) => void ran.push(payload) },
    });
    expect(ran).toEqual([{ to: "deadDaemon/w1" }]);
  });

  it("heartbeats its row, sweeps only while it holds the sweep lease, and deletes its row at stop", async () => {
    const { db, logger } = await database("d1");
    await db.query(
      `INSERT INTO svc_daemons (id, host, pid, svc_version, heartbeat_at)
       VALUES ('gone', 'h', 1, '0.0.0', now() - interval '1 minute')`,
    );
    const notHeld = { held: () => false, release: async () => undefined };
    const roll = new DaemonRoll({ db, sweepLease: notHeld, logger, version: "1.2.3", heartbeatMs: 20 });
    await roll.start();
    const beat = async () =>
      (await db.query<{ t: string }>("SELECT heartbeat_at::text AS t FROM svc_daemons WHERE id = 'd1'")).rows[0]?.t;
    const first = await beat();
    await until(async () => ((await beat()) !== first ? true : undefined), "a heartbeat");
    // No graphile_worker schema here and no lease: the silent daemon stays listed.
    const row = (await db.query("SELECT host, pid, svc_version FROM svc_daemons WHERE id = 'd1'")).rows[0];
    expect(row).toMatchObject({ pid: process.pid, svc_version: "1.2.3" });
    expect((await db.query("SELECT id FROM svc_daemons WHERE id = 'gone'")).rowCount).toBe(1);
    // With the lease (no job queue yet): the row goes, quietly.
    expect(await new DaemonRoll({ db, sweepLease: notHeld, logger, version: "x" }).sweep()).toEqual([
      { daemonId: "gone", jobsReleased: 0 },
    ]);
    // Counted dead meanwhile (its row swept): the next heartbeat writes the row again.
    await db.query("DELETE FROM svc_daemons WHERE id = 'd1'");
    await until(async () => ((await beat()) ? true : undefined), "the row written again");
    await roll.stop();
    expect((await db.query("SELECT id FROM svc_daemons")).rows).toEqual([]);
  });

  it("the leadership module: the sole leadership without a postgres store; in team mode a row and leases", async () => {
    const file = container.createChildContainer();
    registerValue(file, SERVICES, new ServiceDirectory());
    registerValue(file, LOGGER, createMemoryLogger());
    await leadershipModule.start(file);
    expect((file.resolve(SERVICES as symbol) as ServiceDirectory).get("leadership")).toBe(soleLeadership);
    await leadershipModule.stop!(file);

    const { db } = await database("team-d");
    const team = container.createChildContainer();
    const services = new ServiceDirectory();
    registerValue(team, SERVICES, services);
    registerValue(team, LOGGER, createMemoryLogger());
    registerValue(team, STORE, { kind: "postgres", where: "test", db });
    await leadershipModule.start(team);
    const leadership = services.get("leadership");
    expect(leadership).toBeInstanceOf(PostgresLeadership);
    expect((await db.query("SELECT id FROM svc_daemons")).rows).toEqual([{ id: "team-d" }]);
    const lease = leadership.lease("provider:local-gh", { ttlMs: 1_000 });
    await until(() => (lease.held() ? true : undefined), "the lease");
    await leadershipModule.stop!(team);
    expect(lease.held()).toBe(false);
    expect((await db.query("SELECT id FROM svc_daemons")).rows).toEqual([]);
    expect((await db.query("SELECT name FROM svc_leases")).rows).toEqual([]);
  });
});
