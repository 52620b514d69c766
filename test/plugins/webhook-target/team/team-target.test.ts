import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createHostEgress, type HostEgress } from "../../../../core/egress/host-egress.js";
import { FakeClock } from "../../../../core/runtime/clock.js";
import { createLogger } from "../../../../core/runtime/logger.js";
import { openTeamDatabase, type OpenTeamDatabase } from "../../../../core/store/postgres/database.js";
import { openTeamJobs, type OpenTeamJobs } from "../../../../core/store/postgres/jobs.js";
import { createChallengeVerifier } from "../../../../plugins/webhook-target/challenge.js";
import { signWithKey } from "../../../../plugins/webhook-target/signer.js";
import { createWebhookTarget, type WebhookTarget } from "../../../../plugins/webhook-target/target.js";
import { makeTempHome } from "../../../support/cli.js";
import { until } from "../../../support/until.js";
import { postgresMissing, startPostgres, type PostgresServer } from "../../../support/postgres.js";
import {
  LOOPBACK_ALLOWED,
  echoChallenge,
  fakeSentinels,
  secretOf,
  startReceiver,
  testContext,
  waitFor,
  type FakeSentinels,
  type Receiver,
} from "../support/harness.js";

const missing = postgresMissing();
if (missing) console.warn(missing);

const SECRET = secretOf(23);
const TEAM_KEY = randomBytes(32);
const ALL_DONE = "SELECT count(*) AS n FROM webhook_outbox WHERE status = 'delivered' AND seen";

describe.skipIf(!!missing)("webhook target in team mode (outbox and deliveries in PostgreSQL)", () => {
  let server: PostgresServer;
  const logger = createLogger({ level: "error" });
  let home: string;
  let cleanup: () => Promise<void>;
  let rx: Receiver;
  let url: string;
  let sentinels: FakeSentinels;
  let egress: HostEgress;
  let open: Array<{ stop(): Promise<void> } | OpenTeamDatabase>;
  let dbName = 0;

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    await server?.destroy();
  });
  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-whteam-"));
    rx = await startReceiver();
    rx.handle(echoChallenge());
    url = `https://127.0.0.1:${rx.port}/cb`;
    sentinels = fakeSentinels();
    egress = createHostEgress({ allowSubnets: () => LOOPBACK_ALLOWED });
    open = [];
  });
  afterEach(async () => {
    // Targets, then queues, then pools (the store module's order at daemon stop).
    for (const o of open.reverse()) await ("stop" in o ? o.stop() : o.close()).catch(() => undefined);
    await egress.close();
    await rx.close();
    await cleanup();
  });

  /** A daemon of the team: its own pools on `database`, its own target instance (same home: the vault is still a file). */
  const daemon = async (
    database: string,
    id: string,
  ): Promise<{ target: WebhookTarget; db: OpenTeamDatabase; clock: FakeClock }> => {
    const dbUrl = server.url(database);
    // Every daemon of a team has the team's key: with another, a daemon that takes the job cannot
    // open the secret, and the job backs off until the one that can takes it.
    const db = await openTeamDatabase({ url: dbUrl, key: TEAM_KEY, daemonId: id, logger });
    open.push(db);
    const jobs: OpenTeamJobs = await openTeamJobs(db, { url: dbUrl, logger });
    open.push(jobs);
    const clock = new FakeClock(Date.now());
    const { ctx } = testContext(home, sentinels, { clock, egress, services: { teamDatabase: db, teamJobs: jobs } });
    const verifier = createChallengeVerifier({ egress, clock, random: ctx.random, sign: signWithKey });
    const target = createWebhookTarget(ctx, { verifier, tickMs: 0 });
    open.push({ stop: async () => target.stop?.() });
    return { target, db, clock };
  };
  const fresh = async () => {
    const name = `team${++dbName}`;
    await server.createDatabase(name);
    return name;
  };
  const event = (id: string) => ({ id, type: "t.o.a", subjects: ["s"] });
  const deliveries = () => rx.seen.filter((r) => !r.body.toString().includes('"verification"'));

  it("accepts events into PostgreSQL and delivers each as a job: signed, verified, rows delivered and seen", async () => {
    const database = await fresh();
    const { target, db } = await daemon(database, "a-1");
    const stored = await target.create(
      { kind: "webhook", url, secret: SECRET },
      { sentinelId: "snt_1", principal: "t" },
    );
    const view = sentinels.add("snt_1", stored);
    await target.start?.();
    expect(await target.deliver({ sentinel: view, event: event("e0") })).toEqual({ ack: "deferred" });
    const many = await target.deliverMany!(["e1", "e2", "e3"].map((id) => ({ sentinel: view, event: event(id) })));
    expect(many.map((r) => r.status === "fulfilled" && r.value.ack)).toEqual(["deferred", "deferred", "deferred"]);
    await waitFor(() => deliveries().length === 4 && sentinels.seen.length === 4, "4 deliveries");
    const wh = new Webhook(SECRET);
    for (const r of deliveries())
      expect(wh.verify(r.body.toString(), r.headers as Record<string, string>)).toBeTruthy();
    expect(
      deliveries()
        .map((r) => r.headers["webhook-id"])
        .sort(),
    ).toEqual(["e0", "e1", "e2", "e3"]);
    // The engine is told first, then the row records it (one write): wait for the rows.
    await until(
      async () => ((await db.query(ALL_DONE)).rows[0]!.n === "4" ? true : undefined),
      "4 rows delivered and seen",
    );
    expect(target.ledger!.has("snt_1", "e2")).toBe(true);
    expect(target.ledger!.accepted("snt_1")).toBe(4);
    expect(await target.status!(view)).toMatchObject({ outbox: { pending: 0, delivered: 4, dead: 0 } });
  });

  it("a 503 is retried after SPEC's wait as a new job, with the same bytes and webhook-id", async () => {
    const database = await fresh();
    const { target, db } = await daemon(database, "a-2");
    const stored = await target.create(
      { kind: "webhook", url, secret: SECRET },
      { sentinelId: "snt_1", principal: "t" },
    );
    const view = sentinels.add("snt_1", stored);
    const times: number[] = [];
    rx.handle(echoChallenge((_r, res) => res.writeHead(times.push(Date.now()) === 1 ? 503 : 200).end()));
    await target.start?.();
    await target.deliver({ sentinel: view, event: event("e_retry") });
    await waitFor(() => deliveries().length === 1, "the first attempt");
    // The attempt's record commits after the receiver answered, with the retry's job due 500 ms
    // later: it is read once it is there, before that job can run.
    const afterFirst = await until(async () => {
      const r = await db.query<{ attempts: number; last_error: string }>(
        "SELECT attempts, last_error FROM webhook_outbox",
      );
      return r.rows[0]!.attempts >= 1 ? r : undefined;
    }, "the first attempt recorded");
    await waitFor(() => deliveries().length === 2 && sentinels.seen.length === 1, "the retry");
    const [first, second] = deliveries();
    expect(second!.body.equals(first!.body)).toBe(true);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    // Not before SPEC's first wait (500 ms): the retry's job was due then.
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(450);
    expect(afterFirst.rows[0]).toMatchObject({ attempts: 1, last_error: expect.stringContaining("503") });
    await until(async () => ((await db.query(ALL_DONE)).rows[0]!.n === "1" ? true : undefined), "the row delivered");
    const row = await db.query<{ status: string; attempts: number }>("SELECT status, attempts FROM webhook_outbox");
    expect(row.rows).toEqual([{ status: "delivered", attempts: 2 }]);
  });

  it("an event accepted on one daemon is a duplicate on another: one row, one delivery", async () => {
    const database = await fresh();
    const a = await daemon(database, "a-3");
    const b = await daemon(database, "b-3");
    const stored = await a.target.create(
      { kind: "webhook", url, secret: SECRET },
      { sentinelId: "snt_1", principal: "t" },
    );
    const view = sentinels.add("snt_1", stored);
    await a.target.ledger!.ready();
    await b.target.ledger!.ready();
    expect(b.target.ledger!.has("snt_1", "e_dup")).toBe(false);
    await a.target.start?.();
    await b.target.start?.();
    expect(await a.target.deliver({ sentinel: view, event: event("e_dup") })).toEqual({ ack: "deferred" });
    expect(await b.target.deliver({ sentinel: view, event: event("e_dup") })).toEqual({ ack: "duplicate" });
    await waitFor(() => sentinels.seen.length === 1, "the delivery");
    expect(deliveries()).toHaveLength(1);
    expect((await b.db.query("SELECT 1 FROM webhook_outbox")).rowCount).toBe(1);
    expect([b.target.ledger!.has("snt_1", "e_dup"), b.target.ledger!.accepted("snt_1")]).toEqual([true, 1]);
  });

  it("a pending row whose job waits in the queue's backoff, was given up or is gone is delivered by the safety net", async () => {
    const database = await fresh();
    const { target, db, clock } = await daemon(database, "a-4");
    const stored = await target.create(
      { kind: "webhook", url, secret: SECRET },
      { sentinelId: "snt_1", principal: "t" },
    );
    const view = sentinels.add("snt_1", stored);
    // Accepted before this daemon works any job: each row waits with its job.
    for (const id of ["e_backoff", "e_spent", "e_lost", "e_fresh"])
      await target.deliver({ sentinel: view, event: event(id) });
    const jobOf = "(SELECT request_id FROM webhook_outbox WHERE event_id = $1)";
    // What a PostgreSQL restart can leave: a job failed a few times, due in an hour (e^attempts s).
    await db.query(
      `UPDATE graphile_worker._private_jobs SET attempts = 8, run_at = now() + interval '1 hour' WHERE key = ${jobOf}`,
      ["e_backoff"],
    );
    await db.query(`UPDATE graphile_worker._private_jobs SET attempts = max_attempts WHERE key = ${jobOf}`, [
      "e_spent",
    ]);
    await db.query(`DELETE FROM graphile_worker._private_jobs WHERE key = ${jobOf}`, ["e_lost"]);
    // Every row is now overdue (SPEC: a new row is due at once) by more than the grace.
    clock.advance(60_000);
    await target.start?.();
    await waitFor(() => deliveries().length === 4 && sentinels.seen.length === 4, "4 deliveries");
    expect(
      deliveries()
        .map((r) => r.headers["webhook-id"])
        .sort(),
    ).toEqual(["e_backoff", "e_fresh", "e_lost", "e_spent"]);
    await until(async () => ((await db.query(ALL_DONE)).rows[0]!.n === "4" ? true : undefined), "4 rows delivered");
  });
});
