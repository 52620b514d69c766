import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Lease } from "../../../../core/plugin-api/team.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { CORE_MIGRATIONS } from "../../../../core/store/postgres/core-schema.js";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import { PostgresLeadership } from "../../../../core/store/postgres/leases.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";
import { until } from "../../../support/until.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

/** Short, for quick hand-overs; long enough that a loaded machine's late timers do not make a holder lapse. */
const TTL = 1_500;

describe.skipIf(!!missing)("leases on PostgreSQL", () => {
  let server: PostgresServer;
  let n = 0;
  const open: OpenTeamDatabase[] = [];
  const leaderships: PostgresLeadership[] = [];
  const logger = createMemoryLogger();

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterEach(async () => {
    await Promise.all(leaderships.splice(0).map((l) => l.close()));
    await Promise.all(open.splice(0).map((db) => db.close().catch(() => undefined)));
  });
  afterAll(async () => {
    await server?.destroy();
  });

  /** A fresh database, and `count` daemons on it, each with a pool and a Leadership of its own. */
  async function team(count: number) {
    const url = await server.createDatabase(`leases_${++n}`);
    const dbs: OpenTeamDatabase[] = [];
    for (let i = 0; i < count; i++) {
      const db = await openTeamDatabase({ url, key: randomBytes(32), daemonId: `d${i}`, logger, max: 2 });
      open.push(db);
      dbs.push(db);
    }
    await dbs[0]!.migrate("core", CORE_MIGRATIONS);
    const ls = dbs.map((db) => new PostgresLeadership({ sql: db, holder: db.daemonId, logger }));
    leaderships.push(...ls);
    return { url, dbs, ls };
  }

  const holders = (leases: Lease[]) => leases.map((l, i) => (l.held() ? i : -1)).filter((i) => i >= 0);
  const oneHolder = (leases: Lease[]) => () => {
    const h = holders(leases);
    return h.length === 1 ? h[0] : undefined;
  };

  it("is held by exactly one of two daemons, and the row names it", async () => {
    const { dbs, ls } = await team(2);
    const leases = ls.map((l) => l.lease("provider:local-gh", { ttlMs: TTL }));
    await until(oneHolder(leases), "one holder");
    // Through several renewals (expires_at moves on), never two holders; the row names the one.
    const expiries = new Set<string>();
    await until(async () => {
      const now = holders(leases);
      expect(now.length).toBeLessThanOrEqual(1);
      const r = await dbs[0]!.query<{ e: string; holder: string }>(
        "SELECT expires_at::text AS e, holder FROM svc_leases",
      );
      if (now.length) expect(r.rows[0]!.holder).toBe(`d${now[0]}`);
      expiries.add(r.rows[0]!.e);
      return expiries.size >= 4 ? true : undefined;
    }, "four renewals");
  });

  it("passes to the other daemon when the holder's pool closes, and the old holder lets go first", async () => {
    const { dbs, ls } = await team(2);
    const leases = ls.map((l) => l.lease("team:expiry-sweep", { ttlMs: TTL }));
    const first = await until(oneHolder(leases), "one holder");
    const other = 1 - first;
    // Watch both, every turn of the event loop and at every poll: no sample may see both held,
    // and the old holder's held() is false no later than the sample where the new one's is true.
    let oldLetGoAt = -1;
    let newHeldAt = -1;
    let overlap = false;
    let turn = 0;
    const sample = () => {
      turn++;
      const oldHeld = leases[first]!.held();
      const newHeld = leases[other]!.held();
      if (oldHeld && newHeld) overlap = true;
      if (oldLetGoAt < 0 && !oldHeld) oldLetGoAt = turn;
      if (newHeldAt < 0 && newHeld) newHeldAt = turn;
    };
    const watch = setInterval(sample, 1);
    try {
      await dbs[first]!.close(); // its renewals now fail
      await until(() => {
        sample();
        return newHeldAt > 0 ? true : undefined;
      }, "the other daemon to hold the lease");
    } finally {
      clearInterval(watch);
    }
    expect(leases[first]!.held()).toBe(false);
    expect(overlap).toBe(false);
    expect(oldLetGoAt).toBeGreaterThan(0);
    expect(newHeldAt).toBeGreaterThanOrEqual(oldLetGoAt);
  });

  it("lets go at its local deadline when renewals hang (the table locked), and one daemon holds it after", async () => {
    const { url, ls } = await team(2);
    const leases = ls.map((l) => l.lease("provider:local-gh", { ttlMs: TTL }));
    const first = await until(oneHolder(leases), "one holder");
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await locker.query("BEGIN");
      await locker.query("LOCK TABLE svc_leases IN ACCESS EXCLUSIVE MODE");
      await until(() => (leases[first]!.held() ? undefined : true), "the holder to let go while its renewals hang");
      expect(holders(leases)).toEqual([]);
      await locker.query("COMMIT");
    } finally {
      await locker.end();
    }
    await until(oneHolder(leases), "one holder once the table is free");
  });

  it("release deletes the row, so the other daemon takes the lease at its next try", async () => {
    const { dbs, ls } = await team(2);
    const leases = ls.map((l) => l.lease("provider:local-gh", { ttlMs: 3_000 }));
    const first = await until(oneHolder(leases), "one holder");
    await leases[first]!.release();
    expect(leases[first]!.held()).toBe(false);
    const row = await dbs[0]!.query("SELECT holder FROM svc_leases WHERE name = 'provider:local-gh'");
    expect(row.rows.filter((r) => r.holder === `d${first}`)).toEqual([]);
    await until(() => (leases[1 - first]!.held() ? true : undefined), "the other daemon to hold the lease");
  });

  it("is regained by one daemon after PostgreSQL restarts", async () => {
    const { ls } = await team(2);
    const leases = ls.map((l) => l.lease("provider:local-gh", { ttlMs: TTL }));
    await until(oneHolder(leases), "one holder");
    await server.stop("fast");
    await until(() => (holders(leases).length === 0 ? true : undefined), "no holder while the server is down");
    await server.start();
    await until(oneHolder(leases), "one holder after the restart", 20_000);
    expect(holders(leases)).toHaveLength(1);
  });
});
