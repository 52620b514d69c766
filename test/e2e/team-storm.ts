/**
 * A push storm on a team (test/support/team.ts) and its verdict, for the team storm tests: one
 * webhook sentinel per subject `storm:<k>` (half created on daemon 0, half on daemon 1), event n
 * on `storm:<n mod k>`; batches pushed alternately to daemons 0 and 1 (half each), every batch pushed again
 * until a daemon answers 200 (a killed daemon, a 503); a receiver answering 410 to the events
 * marked for rejection and a transient 503 now and then; then the team's outbox rows read from
 * PostgreSQL and checked against what the receiver saw.
 */
import type { ServerResponse } from "node:http";
import { expect } from "vitest";
import { pushEvents, stormEvent } from "../support/agentpush.js";
import { createWebhookSentinel, listedSentinels, type Team } from "../support/team.js";
import { type Delivery, until, type WebhookReceiver } from "../support/webhook-receiver.js";

export interface StormOptions {
  team: Team;
  tag: string;
  events: number;
  batch: number;
  /** The storm's sentinels: event n matches `sentinels[n % sentinels.length]` only. */
  sentinels: string[];
  /** Event n is marked for rejection (the receiver answers 410: dead, delivered_rejected) when n % rejectEvery === 0. */
  rejectEvery: number;
  /** Pushers per daemon (default 2). */
  pushers?: number;
}

export interface Storm {
  /** Event ids some daemon answered 200 for, with the sentinel each matches. */
  accepted: Map<string, string>;
  /** Every answer to a push: HTTP status, or "connection" when the request failed. */
  answers: Map<number | "connection", number>;
  /** Resolves when every batch was accepted. */
  done: Promise<void>;
  /** Ids of the events marked for rejection. */
  rejected: Set<string>;
}

/** The storm's event n, on the subject of the sentinel it matches. */
export function stormEventOf(opts: Pick<StormOptions, "tag" | "sentinels" | "rejectEvery">, n: number) {
  const reject = n % opts.rejectEvery === 0;
  return stormEvent(opts.tag, n, reject ? { reject: true } : {}, `storm:${n % opts.sentinels.length}`);
}

/** Starts pushing in the background (batches alternate between daemons 0 and 1). */
export function startStorm(opts: StormOptions): Storm {
  const storm: Storm = { accepted: new Map(), answers: new Map(), rejected: new Set(), done: Promise.resolve() };
  const count = (a: number | "connection") => storm.answers.set(a, (storm.answers.get(a) ?? 0) + 1);
  const batches = Math.ceil(opts.events / opts.batch);
  const next = [0, 1];
  const pusher = async (slot: number) => {
    for (;;) {
      const b = next[slot]!;
      if (b >= batches) return;
      next[slot] = b + 2;
      const first = b * opts.batch;
      const events = Array.from({ length: Math.min(opts.batch, opts.events - first) }, (_, k) =>
        stormEventOf(opts, first + k),
      );
      for (;;) {
        let status: number | "connection";
        try {
          status = await pushEvents(opts.team.daemon(slot), events);
        } catch {
          status = "connection"; // killed mid-request, or being restarted: nothing acknowledged
        }
        count(status);
        if (status === 200) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      events.forEach((e, k) => {
        storm.accepted.set(e.id, opts.sentinels[(first + k) % opts.sentinels.length]!);
        if ((first + k) % opts.rejectEvery === 0) storm.rejected.add(e.id);
      });
    }
  };
  const per = opts.pushers ?? 2;
  storm.done = Promise.all(Array.from({ length: 2 * per }, (_, i) => pusher(i % 2))).then(() => undefined);
  return storm;
}

/** What the storm's receiver answered: the (sentinel, webhook-id) pairs it answered 200, and 410. */
export interface StormAnswers {
  ok: Set<string>;
  gone: Set<string>;
}

/**
 * The storm receiver's answers: 410 to an event marked for rejection, else a 503 for every 17th
 * request but never twice for one delivery (failures stay transient), else 200.
 */
export function stormAnswers(rx: WebhookReceiver): StormAnswers {
  let n = 0;
  const failed = new Set<string>();
  const answers: StormAnswers = { ok: new Set(), gone: new Set() };
  rx.respond = (x: Delivery, res: ServerResponse) => {
    const key = `${sentinelOf(x)} ${x.id}`;
    if (x.body.includes('"reject":true')) {
      answers.gone.add(key);
      return void res.writeHead(410).end();
    }
    const fail = ++n % 17 === 0 && !failed.has(key);
    if (fail) failed.add(key);
    else answers.ok.add(key);
    res.writeHead(fail ? 503 : 200).end();
  };
  return answers;
}

const sentinelOf = (x: Delivery) => (JSON.parse(x.body) as { sentinelId: string }).sentinelId;

/** Unique (sentinel, webhook-id) pairs the receiver has seen. */
export function deliveredPairs(rx: WebhookReceiver): number {
  return new Set(rx.deliveries.map((x) => `${sentinelOf(x)} ${x.id}`)).size;
}

interface OutboxRow extends Record<string, unknown> {
  sentinel_id: string;
  event_id: string;
  status: string;
  dead_reason: string | null;
  sha: string;
}

/** Outbox rows of `sentinels` still pending (for waiting until none is). */
export async function pendingRows(team: Team, sentinels: string[]): Promise<number> {
  const [row] = await team.sql<{ n: string }>(
    "SELECT count(*) AS n FROM webhook_outbox WHERE sentinel_id = ANY($1) AND status = 'pending'",
    [sentinels],
  );
  return Number(row!.n);
}

/**
 * The storm's verdict. The outbox keeps at most 2,000 rows for the team (older terminal rows are
 * evicted into the sentinel's trace), so "one row per (sentinel, event)" is checked on the
 * trace's count of rows ever inserted: each sentinel's `accepted` equals the storm's events it
 * matches, and `accepted - removed` its rows now. Every accepted event was answered 200 by the
 * receiver (410 for those marked for rejection), which saw one body per (sentinel, webhook-id);
 * every row still there ended delivered, or dead with a reason (delivered_rejected, only the
 * events marked for rejection), and holds the bytes the receiver saw.
 */
export async function expectStormOutcome(
  team: Team,
  rx: WebhookReceiver,
  answers: StormAnswers,
  sentinels: string[],
  storm: Storm,
) {
  const rows = await team.sql<OutboxRow>(
    `SELECT sentinel_id, event_id, status, dead_reason, encode(sha256(body), 'hex') AS sha
       FROM webhook_outbox WHERE sentinel_id = ANY($1)`,
    [sentinels],
  );
  const traces = await team.sql<{ sentinel_id: string; accepted: string; removed: string }>(
    "SELECT sentinel_id, accepted, removed FROM webhook_traces WHERE sentinel_id = ANY($1)",
    [sentinels],
  );
  const byPair = new Map(rows.map((r) => [`${r.sentinel_id} ${r.event_id}`, r]));
  const seen = new Map<string, Set<string>>();
  for (const x of rx.deliveries) {
    const key = `${sentinelOf(x)} ${x.id}`;
    (seen.get(key) ?? seen.set(key, new Set()).get(key)!).add(x.sha);
  }
  expect(rx.unverified, "deliveries whose signature did not verify").toHaveLength(0);
  const expected = new Map(sentinels.map((s) => [s, 0]));
  for (const s of storm.accepted.values()) expected.set(s, expected.get(s)! + 1);
  const current = new Map(sentinels.map((s) => [s, rows.filter((r) => r.sentinel_id === s).length]));
  expect(
    Object.fromEntries(
      traces.map((t) => [t.sentinel_id, [Number(t.accepted), Number(t.accepted) - Number(t.removed)]]),
    ),
    "per sentinel: [rows ever inserted, rows now]",
  ).toEqual(Object.fromEntries(sentinels.map((s) => [s, [expected.get(s), current.get(s)]])));
  const wrong: string[] = [];
  for (const [id, sentinel] of storm.accepted) {
    const key = `${sentinel} ${id}`;
    const bodies = seen.get(key) ?? new Set();
    if (bodies.size !== 1) wrong.push(`${key}: the receiver saw ${bodies.size} bodies`);
    if (storm.rejected.has(id) ? !answers.gone.has(key) : !answers.ok.has(key))
      wrong.push(`${key}: never answered ${storm.rejected.has(id) ? 410 : 200} by the receiver`);
    const row = byPair.get(key);
    if (!row) continue; // evicted by the cap: terminal, counted in the trace
    if (storm.rejected.has(id)) {
      if (row.status !== "dead" || row.dead_reason !== "delivered_rejected")
        wrong.push(`${key}: marked for rejection, ended ${row.status} (${row.dead_reason ?? "no reason"})`);
    } else if (row.status !== "delivered")
      wrong.push(`${key}: ended ${row.status} (${row.dead_reason ?? "no reason"}), not delivered`);
    if (!bodies.has(row.sha)) wrong.push(`${key}: the receiver never saw the stored bytes`);
  }
  expect(wrong.slice(0, 20), `${wrong.length} events wrong`).toEqual([]);
  expect(seen.size, "(sentinel, webhook-id) pairs the receiver saw").toBe(storm.accepted.size);
}

/**
 * `n` webhook sentinels, sentinel k on `storm:<k>` delivering to `url`, created alternately on
 * daemons 0 and 1; resolves once both daemons list them all.
 */
export async function createStormSentinels(team: Team, url: string, secret: string, n = 4): Promise<string[]> {
  const ids: string[] = [];
  for (let k = 0; k < n; k++)
    ids.push(await createWebhookSentinel(team.daemon(k % 2), { subject: `storm:${k}`, url, secret }));
  for (const i of [0, 1])
    await until(
      async () => (await listedSentinels(team.daemon(i))).filter((id) => ids.includes(id)).length === ids.length,
      `the storm's sentinels listed on daemon ${i}`,
    );
  return ids;
}
