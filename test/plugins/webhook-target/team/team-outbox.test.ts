import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../../core/runtime/logger.js";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import { openTeamJobs, type OpenTeamJobs } from "../../../../core/store/postgres/jobs.js";
import { TeamOutbox } from "../../../../plugins/webhook-target/team/team-outbox.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

describe.skipIf(!!missing)("webhook outbox in the team store", () => {
  let server: PostgresServer;
  const logger = createLogger({ level: "error" });
  const open: Array<OpenTeamDatabase | OpenTeamJobs> = [];
  let seq = 0;

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    for (const o of open.reverse()) await ("stop" in o ? o.stop() : o.close()).catch(() => undefined);
    await server?.destroy();
  });

  /** One daemon's outbox (its own pool) on database `name`, with a clock the test moves. */
  const daemon = async (name: string, id: string, clock = { now: 1_000_000 }, cap?: number) => {
    const url = server.url(name);
    const db = await openTeamDatabase({ url, key: randomBytes(32), daemonId: id, logger });
    const jobs = await openTeamJobs(db, { url, logger });
    open.push(db, jobs);
    const outbox = await TeamOutbox.open({
      db,
      jobs,
      now: () => clock.now,
      newId: () => `req_${id}_${++seq}`,
      logger,
      ...(cap ? { cap } : {}),
    });
    return { db, outbox, clock };
  };
  const body = (s: string) => Buffer.from(JSON.stringify({ s }));
  const jobCount = async (db: OpenTeamDatabase) =>
    Number((await db.query<{ n: string }>("SELECT count(*) AS n FROM graphile_worker.jobs")).rows[0]!.n);

  it("the same event added at once on two daemons makes one row and one job", async () => {
    await server.createDatabase("dup");
    const a = await daemon("dup", "a");
    const b = await daemon("dup", "b");
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        (i % 2 ? a : b).outbox.add({ sentinelId: "s1", eventId: "e1", body: body("e1") }),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect((await a.outbox.rowsOf("s1")).map((r) => r.eventId)).toEqual(["e1"]);
    expect(await jobCount(a.db)).toBe(1);
    const job = await a.db.query<{ key: string }>("SELECT key FROM graphile_worker.jobs");
    expect(job.rows[0]!.key).toBe(results.find((r) => r.created)!.row!.requestId);
    // Both daemons learnt the event and the count.
    expect([a.outbox.hasEvent("s1", "e1"), b.outbox.hasEvent("s1", "e1")]).toEqual([true, true]);
    expect([a.outbox.accepted("s1"), b.outbox.accepted("s1")]).toEqual([1, 1]);
  });

  it("until count: concurrent accepts on two daemons stop exactly at the limit", async () => {
    await server.createDatabase("limit");
    const a = await daemon("limit", "a");
    const b = await daemon("limit", "b");
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? a : b).outbox.add({ sentinelId: "s", eventId: `e${i}`, body: body(`e${i}`), limit: 7 }),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(7);
    expect(results.filter((r) => !r.created && r.row === undefined)).toHaveLength(23);
    expect(await a.outbox.rowsOf("s")).toHaveLength(7);
    expect(await jobCount(a.db)).toBe(7);
    // A refused event is not taken for an accepted one.
    const refused = results.findIndex((r) => !r.created);
    expect((refused % 2 ? a : b).outbox.hasEvent("s", `e${refused}`)).toBe(false);
  });

  it("at the cap the oldest terminal rows (seen first) go into their sentinel's trace; all pending refuses", async () => {
    await server.createDatabase("cap");
    const { outbox, clock } = await daemon("cap", "a", { now: 1_000_000 }, 3);
    const add = (e: string) => outbox.add({ sentinelId: "s", eventId: e, body: body(e) });
    const r1 = (await add("e1")).row!;
    clock.now += 1;
    const r2 = (await add("e2")).row!;
    clock.now += 1;
    await add("e3");
    const done = { attempts: 1, lastError: null, lastAt: clock.now };
    await outbox.update(r1.requestId, { status: "dead", deliveryState: done, deadReason: "delivered_rejected" });
    clock.now += 1;
    await outbox.update(r2.requestId, { status: "delivered", deliveryState: done }, { seen: true });
    const fourth = await add("e4");
    // r2 is seen: evicted before the older but unseen r1 (whose engine acknowledgement is still owed).
    expect(fourth.created).toBe(true);
    expect(fourth.evicted.map((r) => r.eventId)).toEqual(["e2"]);
    expect((await outbox.rowsOf("s")).map((r) => r.eventId)).toEqual(["e1", "e3", "e4"]);
    // The evicted event is still known (its trace) and still counted.
    const again = await add("e2");
    expect([again.created, again.row, outbox.accepted("s")]).toEqual([false, undefined, 4]);
    const fifth = await add("e5");
    expect(fifth.evicted.map((r) => r.eventId)).toEqual(["e1"]);
    await expect(add("e6")).rejects.toMatchObject({ code: "unavailable", message: expect.stringContaining("full") });
  });

  it("reaps delivered rows 24 hours after delivery into the trace, and ages pending rows out after 7 days", async () => {
    await server.createDatabase("reap");
    const clock = { now: 5_000_000 };
    const { outbox } = await daemon("reap", "a", clock);
    const d = (await outbox.add({ sentinelId: "s", eventId: "d", body: body("d") })).row!;
    const p = (await outbox.add({ sentinelId: "s", eventId: "p", body: body("p") })).row!;
    await outbox.update(d.requestId, {
      status: "delivered",
      deliveryState: { attempts: 1, lastError: null, lastAt: 1 },
    });
    clock.now += 24 * 3_600_000 - 1;
    expect(await outbox.reap()).toEqual([]);
    expect(await outbox.get(d.requestId)).toBeDefined();
    clock.now += 1;
    expect(await outbox.reap()).toEqual([]);
    expect(await outbox.get(d.requestId)).toBeUndefined();
    expect((await outbox.add({ sentinelId: "s", eventId: "d", body: body("d") })).created).toBe(false);
    clock.now += 6 * 24 * 3_600_000;
    const aged = await outbox.reap();
    expect(aged.map((r) => [r.requestId, r.status, r.deadReason])).toEqual([[p.requestId, "dead", "age_out"]]);
    expect((await outbox.unseenTerminal()).map((r) => r.requestId)).toEqual([p.requestId]);
    expect(outbox.accepted("s")).toBe(2);
  });

  it("reads a row's exact bytes back, and refuses bytes that do not match their sha256", async () => {
    await server.createDatabase("body");
    const { db, outbox } = await daemon("body", "a");
    const bytes = randomBytes(5000);
    const { row } = await outbox.add({ sentinelId: "s", eventId: "e", body: bytes });
    const fresh = (await outbox.get(row!.requestId))!;
    expect(fresh.bodyBytes).toMatchObject({ file: "db", length: 5000 });
    expect((await outbox.readBody(fresh)).equals(bytes)).toBe(true);
    await db.query("UPDATE webhook_outbox SET body = $1 WHERE request_id = $2", [randomBytes(5000), row!.requestId]);
    await expect(outbox.readBody(fresh)).rejects.toThrow(/sha256/);
  });

  it("a retry, a replay and a resume each commit with their job", async () => {
    await server.createDatabase("retry");
    const { db, outbox } = await daemon("retry", "a");
    const { row } = await outbox.add({ sentinelId: "s", eventId: "e", body: body("e") });
    const id = row!.requestId;
    await db.query("DELETE FROM graphile_worker._private_jobs");
    await outbox.update(id, { status: "pending", deliveryState: { attempts: 1, lastError: "503", lastAt: 1 } });
    const due = await db.query<{ run_at: Date }>("SELECT run_at FROM graphile_worker.jobs WHERE key = $1", [id]);
    expect(due.rows).toHaveLength(1);
    expect(due.rows[0]!.run_at.getTime()).toBeGreaterThan(Date.now() + 100);
    await outbox.update(id, {
      status: "dead",
      deliveryState: { attempts: 2, lastError: "410", lastAt: 2 },
      deadReason: "delivered_rejected",
    });
    await db.query("DELETE FROM graphile_worker._private_jobs");
    const replayed = await outbox.replay([id]);
    expect(replayed.map((r) => [r.status, r.replays, r.deliveryState.attempts])).toEqual([["pending", 1, 0]]);
    expect(await jobCount(db)).toBe(1);
    await db.query("DELETE FROM graphile_worker._private_jobs");
    await outbox.update(id, { status: "pending", deliveryState: { attempts: 3, lastError: "503", lastAt: 3 } });
    await db.query("DELETE FROM graphile_worker._private_jobs");
    await outbox.restartAttempts([id]);
    expect((await outbox.get(id))!.deliveryState.attempts).toBe(0);
    expect(await jobCount(db)).toBe(1);
  });
});
