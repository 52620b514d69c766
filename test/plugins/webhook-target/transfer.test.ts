import { randomBytes } from "node:crypto";
import { Logger as WorkerLogger, runMigrations } from "graphile-worker";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { StoreTransfer, TeamJobs } from "../../../core/plugin-api/index.js";
import { FakeClock, createRandom } from "../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../core/store/postgres/database.js";
import { buildEnvelope } from "../../../plugins/webhook-target/envelope.js";
import { LIMITS } from "../../../plugins/webhook-target/limits.js";
import { Outbox } from "../../../plugins/webhook-target/outbox/outbox.js";
import { deliveryJobOf } from "../../../plugins/webhook-target/team/team-outbox.js";
import { teamTransfer } from "../../../plugins/webhook-target/team/team-transfer.js";
import type { TransferRecord } from "../../../plugins/webhook-target/transfer-records.js";
import { fileTransfer } from "../../../plugins/webhook-target/transfer.js";
import { SecretVault } from "../../../plugins/webhook-target/vault.js";
import { makeTempHome } from "../../support/cli.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../support/postgres.js";
import { secretOf } from "./support/harness.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const clock = new FakeClock(Date.now());
const random = createRandom(clock);
const logger = createMemoryLogger();
const SENTINELS = new Set(["snt_a", "snt_b"]);

interface FileHome {
  home: string;
  outbox: Outbox;
  vault: SecretVault;
  cleanup(): Promise<void>;
}

const homes: FileHome[] = [];
async function fileHome(): Promise<FileHome> {
  const { home, cleanup } = await makeTempHome("svc-transfer-");
  const outbox = await Outbox.open({ home, now: () => clock.now(), newId: () => `req_${random.ulid()}`, logger });
  const h = { home, outbox, vault: new SecretVault(home, random, () => clock.now()), cleanup };
  homes.push(h);
  return h;
}
/** The same home opened again from its files (a daemon restart). */
async function reopen(h: FileHome): Promise<FileHome> {
  await h.outbox.close();
  const outbox = await Outbox.open({
    home: h.home,
    now: () => clock.now(),
    newId: () => `req_${random.ulid()}`,
    logger,
  });
  return Object.assign(h, { outbox, vault: new SecretVault(h.home, random, () => clock.now()) });
}
const transferOf = (h: FileHome) => typed(fileTransfer({ outbox: async () => h.outbox, vault: h.vault }));
/** The transfer with its records typed (the interface gives them as `unknown[]`). */
const typed = (t: StoreTransfer) => ({
  export: async (ids: ReadonlySet<string>) => {
    const { records, summary } = await t.export(ids);
    return { records: records as TransferRecord[], summary };
  },
  import: (records: unknown[]) => t.import(records),
});

/**
 * A home with every kind of record: secrets (a rotated sentinel has two), pending, delivered and
 * dead rows (one replayed), a trace of reaped rows, and another sentinel's records that are not moved.
 */
async function populated(): Promise<FileHome> {
  const h = await fileHome();
  const { outbox, vault } = h;
  const add = async (sentinelId: string, eventId: string) => {
    clock.advance(1);
    const body = buildEnvelope(
      sentinelId,
      { id: eventId, type: "t.o.a", subjects: ["s:1"], data: { eventId, n: "é✓" } },
      clock.now(),
    );
    return (await outbox.add({ sentinelId, eventId, body })).row;
  };
  const deliver = (requestId: string) =>
    outbox.update(requestId, {
      status: "delivered",
      deliveryState: { attempts: 1, lastError: null, lastAt: clock.now() },
    });
  await vault.put("snt_a", secretOf(31));
  await vault.put("snt_a", secretOf(32));
  await vault.put("snt_b", secretOf(33));
  await vault.put("snt_other", secretOf(34));
  // Delivered and reaped a day later: what stays is the sentinel's trace.
  for (const e of ["r1", "r2"]) await deliver((await add("snt_a", e)).requestId);
  clock.advance(LIMITS.deliveredRetentionMs + 1);
  await outbox.reap();
  const pending = await add("snt_a", "p1");
  await outbox.update(pending.requestId, {
    status: "pending",
    deliveryState: { attempts: 2, lastError: "HTTP 503 from 127.0.0.1", lastAt: clock.now() },
  });
  await add("snt_a", "p2");
  const delivered = await add("snt_a", "d1");
  await deliver(delivered.requestId);
  await outbox.markSeen(delivered.requestId);
  const dead = await add("snt_b", "x1");
  await outbox.kill(dead.requestId, "delivered_rejected", "HTTP 410 from 127.0.0.1");
  await outbox.replay([dead.requestId]);
  await outbox.kill(dead.requestId, "sentinel_removed");
  await add("snt_b", "p3");
  await add("snt_other", "o1");
  return h;
}

const byKey = (records: TransferRecord[]) => [...records].sort((a, b) => key(a).localeCompare(key(b)));
const key = (r: TransferRecord) =>
  r.type === "secret" ? `0${r.ref}` : r.type === "row" ? `1${r.requestId}` : `2${r.sentinelId}`;

afterEach(async () => {
  for (const h of homes.splice(0)) {
    await h.outbox.close().catch(() => undefined);
    await h.cleanup();
  }
});

describe("webhook target transfer between file homes", () => {
  it("exports secrets, rows with their exact bodies and full state, and traces; a fresh home imports them once", async () => {
    const source = await populated();
    const { records, summary } = await transferOf(source).export(SENTINELS);
    expect(summary).toEqual({ secrets: 3, rows: 5, pending: 3, traces: 2 });
    expect(JSON.stringify(records)).not.toContain("snt_other");
    const trace = records.find((r) => r.type === "trace" && r.sentinelId === "snt_a");
    expect(trace).toEqual({ type: "trace", sentinelId: "snt_a", accepted: 5, removed: 2, eventIds: ["r1", "r2"] });

    const target = await fileHome();
    expect(await transferOf(target).import(records)).toEqual(summary);
    expect(await transferOf(target).import(records)).toEqual({ secrets: 0, rows: 0, pending: 0, traces: 0 });
    // Durable: the home opened again from its files holds the same records.
    await reopen(target);
    expect(byKey((await transferOf(target).export(SENTINELS)).records)).toEqual(byKey(records));
    expect(target.outbox.hasEvent("snt_a", "r1")).toBe(true);
    expect(target.outbox.accepted("snt_a")).toBe(5);
    const p1 = target.outbox.rowsOf("snt_a").find((r) => r.eventId === "p1")!;
    const original = source.outbox.rowsOf("snt_a").find((r) => r.eventId === "p1")!;
    expect((await target.outbox.readBody(p1)).equals(await source.outbox.readBody(original))).toBe(true);
  });

  it("refuses a record that is not a secret, row or trace, naming where, without quoting a secret", async () => {
    const target = await fileHome();
    const err = await transferOf(target)
      .import([{ type: "secret", ref: "swsec_1", sentinelId: "snt_a", secret: secretOf(9), createdAt: -1 }])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "invalid_input", details: [{ path: "records[0].createdAt" }] });
    expect(JSON.stringify(err)).not.toContain(secretOf(9).slice(6, 20));
    expect(JSON.stringify((err as Error).message)).not.toContain(secretOf(9).slice(6, 20));
  });
});

describe.skipIf(!!missing)("webhook target transfer through PostgreSQL", () => {
  let server: PostgresServer;
  let db: OpenTeamDatabase;
  let n = 0;
  /** The team job queue's `add`, straight onto graphile-worker's add_job (jobs are only counted here). */
  const jobs: TeamJobs = {
    async add(sql, job) {
      await sql.query("SELECT graphile_worker.add_job($1, $2::json, run_at => $3, job_key => $4)", [
        job.task,
        JSON.stringify(job.payload),
        job.runAt ?? null,
        job.key ?? null,
      ]);
    },
    async ensure() {
      throw new Error("no safety net in this test");
    },
    async work() {
      throw new Error("no worker in this test");
    },
  };

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.destroy();
  });
  beforeEach(async () => {
    const url = await server.createDatabase(`transfer_${++n}`);
    await runMigrations({ connectionString: url, logger: new WorkerLogger(() => () => undefined) });
    db = await openTeamDatabase({ url, key: randomBytes(32), daemonId: "t", logger });
  });
  afterEach(async () => {
    await db?.close();
  });

  it("round-trips a file home through PostgreSQL into a fresh home: same rows, bytes, secrets and counts; twice changes nothing", async () => {
    const source = await populated();
    const exported = await transferOf(source).export(SENTINELS);
    const team = typed(teamTransfer(db, () => jobs));
    expect(await team.import(exported.records)).toEqual(exported.summary);
    expect(await team.import(exported.records)).toEqual({ secrets: 0, rows: 0, pending: 0, traces: 0 });

    // At rest: sealed secrets, the exact body bytes, one delivery job per pending row.
    const secrets = await db.query<{ sealed: Buffer }>("SELECT sealed FROM webhook_secrets");
    expect(secrets.rows).toHaveLength(3);
    for (const { sealed } of secrets.rows) expect(sealed.includes(Buffer.from(secretOf(31).slice(6, 30)))).toBe(false);
    const pendingIds = exported.records.flatMap((r) =>
      r.type === "row" && r.status === "pending" ? [r.requestId] : [],
    );
    const queued = await db.query<{ task_identifier: string; key: string }>(
      "SELECT task_identifier, key FROM graphile_worker.jobs",
    );
    expect(queued.rows.map((r) => r.key).sort()).toEqual(pendingIds.map((id) => deliveryJobOf(id).key).sort());
    expect(new Set(queued.rows.map((r) => r.task_identifier))).toEqual(new Set([deliveryJobOf("x").task]));
    const x1 = exported.records.find((r) => r.type === "row" && r.eventId === "x1")!;
    const stored = await db.query<{ body: Buffer }>("SELECT body FROM webhook_outbox WHERE event_id = 'x1'");
    expect(stored.rows[0]!.body.equals(Buffer.from((x1 as { body: string }).body, "base64"))).toBe(true);

    const back = await team.export(SENTINELS);
    expect(back.summary).toEqual(exported.summary);
    expect(byKey(back.records)).toEqual(byKey(exported.records));

    const fresh = await fileHome();
    expect(await transferOf(fresh).import(back.records)).toEqual(exported.summary);
    expect(await transferOf(fresh).import(back.records)).toEqual({ secrets: 0, rows: 0, pending: 0, traces: 0 });
    await reopen(fresh);
    const again = await transferOf(fresh).export(SENTINELS);
    expect(again.summary).toEqual(exported.summary);
    expect(byKey(again.records)).toEqual(byKey(exported.records));
    for (const row of source.outbox.rowsOf("snt_b")) {
      const copy = fresh.outbox.get(row.requestId)!;
      expect(copy).toMatchObject({ ...row, bodyBytes: { length: row.bodyBytes.length, sha256: row.bodyBytes.sha256 } });
      expect((await fresh.outbox.readBody(copy)).equals(await source.outbox.readBody(row))).toBe(true);
    }
    for (const ref of (await source.vault.list(SENTINELS)).map((s) => s.ref))
      expect(await fresh.vault.get(ref)).toBe(await source.vault.get(ref));
  });

  it("skips a row whose event the team's trace already holds (a reaped duplicate is not revived)", async () => {
    const team = typed(teamTransfer(db, () => jobs));
    const source = await populated();
    const { records } = await transferOf(source).export(SENTINELS);
    const traceOnly = records.filter((r) => r.type === "trace");
    await team.import(traceOnly);
    const revived = {
      ...records.find((r) => r.type === "row")!,
      requestId: "req_new",
      eventId: "r1",
    };
    expect(await team.import([revived])).toMatchObject({ rows: 0 });
  });
});
