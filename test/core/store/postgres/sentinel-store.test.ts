import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../../core/runtime/logger.js";
import type { SentinelRecord } from "../../../../core/sentinels/service.js";
import { CORE_MIGRATIONS } from "../../../../core/store/postgres/core-schema.js";
import { type OpenTeamDatabase, openTeamDatabase } from "../../../../core/store/postgres/database.js";
import { PostgresSentinelStore } from "../../../../core/store/postgres/sentinel-store.js";
import { type PostgresServer, postgresMissing, startPostgres } from "../../../support/postgres.js";
import { until } from "../../../support/until.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const logger = createLogger({ level: "error" });
const key = randomBytes(32);

function record(id: string, over: Partial<SentinelRecord> = {}): SentinelRecord {
  return {
    id,
    status: "active",
    createdAt: 1,
    updatedAt: 1,
    deliveredCount: 0,
    spec: {
      match: [{ subject: `ci:${id}` }],
      until: { kind: "never" },
      provider: "agentpush",
      target: { kind: "session", sessionId: "s1" },
    },
    ...over,
  } as SentinelRecord;
}

interface Daemon {
  db: OpenTeamDatabase;
  store: PostgresSentinelStore;
  changes: Array<{ id: string; before?: SentinelRecord; after?: SentinelRecord }>;
}

describe.skipIf(!!missing)("the sentinel store on PostgreSQL", () => {
  let server: PostgresServer;
  let n = 0;
  const open: Daemon[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterEach(async () => {
    for (const d of open.splice(0)) {
      await d.store.close();
      await d.db.close();
    }
  });
  afterAll(async () => {
    await server?.destroy();
  });

  /** Two daemons of one team: two pools on one fresh database, each with its store loaded. */
  async function team(): Promise<[Daemon, Daemon]> {
    const url = await server.createDatabase(`sentinels_${++n}`);
    const daemon = async (name: string): Promise<Daemon> => {
      const db = await openTeamDatabase({ url, key, daemonId: name, logger });
      await db.migrate("core", CORE_MIGRATIONS);
      const store = new PostgresSentinelStore(db, logger);
      const changes: Daemon["changes"] = [];
      store.onRemoteChange(async (id, before, after) => void changes.push({ id, before, after }));
      await store.load();
      const d = { db, store, changes };
      open.push(d);
      return d;
    };
    return [await daemon("a"), await daemon("b")];
  }

  it("serves what the table holds, and refuses a second insert of an id", async () => {
    const [a] = await team();
    await a.store.insert(record("snt_1"));
    expect(a.store.get("snt_1")).toMatchObject({ id: "snt_1", status: "active" });
    await expect(a.store.insert(record("snt_1"))).rejects.toMatchObject({ code: "conflict" });
    await expect(a.store.update("snt_none", (r) => r)).rejects.toMatchObject({ code: "not_found" });
    expect(await a.store.remove("snt_none")).toBe(false);
    const again = new PostgresSentinelStore(a.db, logger);
    expect((await again.load()).map((r) => r.id)).toEqual(["snt_1"]);
    await again.close();
  });

  it("hands another daemon's insert, update and remove to the listener, through NOTIFY, and not its own", async () => {
    const [a, b] = await team();
    await a.store.insert(record("snt_x"));
    await until(() => b.store.get("snt_x"), "B to see A's sentinel");
    expect(b.changes).toEqual([{ id: "snt_x", before: undefined, after: expect.objectContaining({ id: "snt_x" }) }]);

    await a.store.update("snt_x", (r) => ({ ...r, status: "expired", endedReason: "at" }));
    await until(() => (b.store.get("snt_x")?.status === "expired" ? true : undefined), "B to see the expiry");
    expect(b.changes[1]).toMatchObject({ before: { status: "active" }, after: { status: "expired" } });

    expect(await a.store.remove("snt_x")).toBe(true);
    await until(() => (b.store.get("snt_x") ? undefined : true), "B to see the removal");
    expect(b.changes[2]).toMatchObject({ id: "snt_x", before: { status: "expired" }, after: undefined });
    // A's own writes reach its cache at commit; its listener hears them and finds nothing new.
    await b.store.insert(record("snt_y"));
    await until(() => a.store.get("snt_y"), "A to see B's sentinel");
    expect(a.changes.map((c) => c.id)).toEqual(["snt_y"]);
    expect(b.changes).toHaveLength(3);
  });

  it("keeps both changes when two daemons update one sentinel at once", async () => {
    const [a, b] = await team();
    await a.store.insert(record("snt_c", { deliveredCount: 0 }));
    await until(() => b.store.get("snt_c"), "B to see it");
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let inA!: () => void;
    const aHolds = new Promise<void>((r) => (inA = r));
    // A holds the row (its mutation waits) while B's update of the same row starts.
    const fromA = a.store.update("snt_c", async (r) => {
      inA();
      await held;
      return { ...r, deliveredCount: r.deliveredCount + 1, label: "from-a" };
    });
    await aHolds;
    const fromB = b.store.update("snt_c", (r) => ({ ...r, deliveredCount: r.deliveredCount + 10, updatedAt: 99 }));
    await until(
      async () =>
        (await a.db.query("SELECT 1 FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid WHERE NOT l.granted"))
          .rowCount > 0 || undefined,
      "B to wait on A's row lock",
    );
    release();
    await Promise.all([fromA, fromB]);
    const stored = (await a.db.query<{ record: SentinelRecord }>("SELECT record FROM svc_sentinels")).rows[0]!.record;
    expect(stored).toMatchObject({ deliveredCount: 11, label: "from-a", updatedAt: 99 });
    for (const d of [a, b])
      await until(
        () => (d.store.get("snt_c")?.deliveredCount === 11 ? true : undefined),
        "both caches to hold both changes",
      );
  });

  it("re-reads every record after its listener reconnects (what it missed meanwhile)", async () => {
    const [a, b] = await team();
    await a.store.insert(record("snt_seen"));
    await until(() => b.store.get("snt_seen"), "B to see the first one");
    // Changes B is never told of: written without NOTIFY, as if sent while its listener was down.
    await a.db.query("INSERT INTO svc_sentinels (id, record) VALUES ($1, $2)", ["snt_missed", record("snt_missed")]);
    await a.db.query("DELETE FROM svc_sentinels WHERE id = 'snt_seen'");
    const listeners = await a.db.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND datname = current_database()",
    );
    expect(listeners.rowCount).toBe(2);
    for (const { pid } of listeners.rows) await a.db.query("SELECT pg_terminate_backend($1)", [pid]);
    await until(
      () => (b.store.get("snt_missed") && !b.store.get("snt_seen") ? true : undefined),
      "B to reload after reconnecting",
    );
    const heard = b.changes.map((c) => `${c.id} ${c.after ? "present" : "gone"}`);
    expect(heard[0]).toBe("snt_seen present");
    expect(heard.slice(1).sort()).toEqual(["snt_missed present", "snt_seen gone"]);
    // And it hears notifications again.
    await a.store.insert(record("snt_after"));
    await until(() => b.store.get("snt_after"), "B to hear after the reconnect");
  });
});
