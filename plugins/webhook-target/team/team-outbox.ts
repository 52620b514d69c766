/**
 * The webhook outbox in the team store (PostgreSQL): the same rows, states and rules as the file
 * outbox (SPEC.md "Outbox row"), kept in `webhook_outbox` (unique on (sentinel_id, event_id)) and
 * `webhook_traces` (per sentinel: events accepted, rows removed, the last 1000 removed ids). A row
 * and its delivery job commit in one transaction; so does every change that needs a next
 * attempt (a retry, a replay, a resume) and its job. Accepts of one sentinel serialize on its trace
 * row, so a duplicate from any daemon inserts nothing and `until: count` is exact across daemons.
 * Times are epoch ms from the injected clock, as in the files.
 */
import { createHash } from "node:crypto";
import {
  SvcError,
  type Logger,
  type TeamDatabase,
  type TeamJobs,
  type TeamSql,
} from "../../../core/plugin-api/index.js";
import { LIMITS, retryWaitMs } from "../limits.js";
import type { OutboxPort, PortAddResult } from "../outbox/port.js";
import {
  TRACE_IDS,
  rowKey,
  type DeadReason,
  type DeliveryState,
  type OutboxRow,
  type RowStatus,
} from "../outbox/row.js";
import { WEBHOOK_MIGRATIONS, WEBHOOK_OWNER } from "./schema.js";

/** The job that delivers one row (payload `{requestId}`, keyed by it). */
export const DELIVER_TASK = "webhook.deliver";

/** The job that runs a pending row's next attempt: keyed by the row, so a row has at most one waiting. */
export const deliveryJobOf = (requestId: string, runAt?: Date) => ({
  task: DELIVER_TASK,
  payload: { requestId },
  key: requestId,
  ...(runAt ? { runAt } : {}),
});

export interface TeamOutboxOptions {
  db: TeamDatabase;
  jobs: TeamJobs;
  now: () => number;
  newId: () => string;
  logger: Logger;
  /** Row cap (default 2,000). */
  cap?: number;
}

/** Accepts this close to the cap take a team-wide lock and count again, so the cap holds exactly. */
const NEAR_CAP = 256;
const CAP_LOCK = 0x73766f63; // "svoc"
/** Bytes of new rows' bodies kept for their first attempt, when this daemon's job runs it (saves one read). */
const HELD_BYTES = 8 * 1024 * 1024;
/** A pending row's next attempt this late (past SPEC.md's wait) is given a job again by {@link TeamOutbox.redrive}. */
const REDRIVE_GRACE_MS = 15_000;
/** Rows one redrive looks at (the oldest first). */
const REDRIVE_BATCH = 500;
/** Event ids the ledger's cache holds before it is read again from the database. */
const KNOWN_MAX = 200_000;

const COLUMNS = `request_id, sentinel_id, event_id, length(body) AS body_length, body_sha256, status, dead_reason,
  attempts, last_error, last_at, created_at, updated_at, seen, replays, replayed_at`;

type Db = Record<string, unknown>;
/** What one accept found: `accepted` the sentinel's count after it, `known` whether the event counts as accepted. */
type Added = PortAddResult & { accepted: number; known: boolean };

export class TeamOutbox implements OutboxPort {
  private readonly cap: number;
  /** Events this daemon knows were accepted (rows and traces it has read or written). */
  private readonly known = new Set<string>();
  /** Each sentinel's count of accepted events as last read (every add refreshes it). */
  private readonly acceptedOf = new Map<string, number>();
  private readonly held = new Map<string, Buffer>();
  private heldBytes = 0;
  private refreshing: Promise<void> | undefined;

  private constructor(private readonly o: TeamOutboxOptions) {
    this.cap = o.cap ?? LIMITS.outboxCap;
  }

  /** Migrates the webhook target's tables (once per team) and reads what the ledger answers from. */
  static async open(o: TeamOutboxOptions): Promise<TeamOutbox> {
    await o.db.migrate(WEBHOOK_OWNER, WEBHOOK_MIGRATIONS);
    const outbox = new TeamOutbox(o);
    await outbox.refresh();
    return outbox;
  }

  /** Reloads the ledger's cache: every sentinel's accepted count and known event ids (calls at once share one read). */
  refresh(): Promise<void> {
    this.refreshing ??= this.reload().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async reload(): Promise<void> {
    const traces = await this.o.db.query<{ sentinel_id: string; accepted: string; event_ids: string[] }>(
      "SELECT sentinel_id, accepted, event_ids FROM webhook_traces",
    );
    for (const t of traces.rows) {
      this.acceptedOf.set(t.sentinel_id, Number(t.accepted));
      for (const e of t.event_ids) this.known.add(rowKey(t.sentinel_id, e));
    }
    const rows = await this.o.db.query<{ sentinel_id: string; event_id: string }>(
      "SELECT sentinel_id, event_id FROM webhook_outbox",
    );
    for (const r of rows.rows) this.known.add(rowKey(r.sentinel_id, r.event_id));
  }

  async add(input: { sentinelId: string; eventId: string; body: Buffer; limit?: number }): Promise<PortAddResult> {
    const { sentinelId, eventId, body } = input;
    const result = await this.o.db.tx(async (sql): Promise<Added> => {
      const { rows: counted } = await sql.query<{ n: string }>("SELECT count(*) AS n FROM webhook_outbox");
      const near = Number(counted[0]!.n) + NEAR_CAP >= this.cap;
      if (near) await sql.query("SELECT pg_advisory_xact_lock($1)", [CAP_LOCK]);
      const trace = await lockTrace(sql, sentinelId);
      const none = { created: false, evicted: [] as OutboxRow[], accepted: trace.accepted, known: true };
      const existing = async (): Promise<Added> => {
        const { rows } = await sql.query(
          `SELECT ${COLUMNS} FROM webhook_outbox WHERE sentinel_id = $1 AND event_id = $2`,
          [sentinelId, eventId],
        );
        return rows[0] ? { ...none, row: toRow(rows[0]) } : none;
      };
      if (trace.eventIds.includes(eventId)) return existing();
      if (input.limit !== undefined && trace.accepted >= input.limit) {
        const had = await existing();
        return had.row ? had : { ...none, known: false };
      }
      const evicted = near ? await this.evict(sql, input) : [];
      const now = this.o.now();
      const requestId = this.o.newId();
      const inserted = await sql.query(
        `INSERT INTO webhook_outbox (request_id, sentinel_id, event_id, body, body_sha256, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6)
         ON CONFLICT (sentinel_id, event_id) DO NOTHING RETURNING ${COLUMNS}`,
        [requestId, sentinelId, eventId, body, sha256(body), now],
      );
      // The unique (sentinel_id, event_id): a duplicate from any daemon inserts nothing.
      if (!inserted.rows[0]) return existing();
      await sql.query("UPDATE webhook_traces SET accepted = accepted + 1 WHERE sentinel_id = $1", [sentinelId]);
      await this.o.jobs.add(sql, deliveryJobOf(requestId));
      return { created: true, evicted, accepted: trace.accepted + 1, known: true, row: toRow(inserted.rows[0]) };
    });
    if (result.known) this.learn(sentinelId, eventId);
    this.acceptedOf.set(sentinelId, result.accepted);
    if (result.created && result.row) this.hold(result.row.requestId, body);
    return { created: result.created, evicted: result.evicted, ...(result.row ? { row: result.row } : {}) };
  }

  async get(requestId: string): Promise<OutboxRow | undefined> {
    const { rows } = await this.o.db.query(`SELECT ${COLUMNS} FROM webhook_outbox WHERE request_id = $1`, [requestId]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  rowsOf(sentinelId: string): Promise<OutboxRow[]> {
    return this.select("WHERE sentinel_id = $1 ORDER BY created_at, request_id", [sentinelId]);
  }

  pending(): Promise<OutboxRow[]> {
    return this.select("WHERE status = 'pending' ORDER BY created_at, request_id");
  }

  async counts(sentinelIds: ReadonlySet<string>): Promise<{ pending: number; dead: number }> {
    const { rows } = await this.o.db.query<{ status: string; n: string }>(
      "SELECT status, count(*) AS n FROM webhook_outbox WHERE sentinel_id = ANY($1) GROUP BY status",
      [[...sentinelIds]],
    );
    const of = (s: string) => Number(rows.find((r) => r.status === s)?.n ?? 0);
    return { pending: of("pending"), dead: of("dead") };
  }

  delivered(): Promise<OutboxRow[]> {
    return this.select("WHERE status = 'delivered'");
  }

  unseenTerminal(): Promise<OutboxRow[]> {
    return this.select("WHERE status <> 'pending' AND NOT seen");
  }

  /** What this daemon knows (the engine's quick check); {@link add} is the team's real one. */
  hasEvent(sentinelId: string, eventId: string): boolean {
    return this.known.has(rowKey(sentinelId, eventId));
  }

  /** The sentinel's accepted count as this daemon last read it (every add and {@link refresh} update it). */
  accepted(sentinelId: string): number {
    return this.acceptedOf.get(sentinelId) ?? 0;
  }

  /** The cap is checked in {@link add}, with the team's rows counted. */
  refusal(): SvcError | undefined {
    return undefined;
  }

  knows(sentinelId: string, eventId: string): boolean {
    return this.known.has(rowKey(sentinelId, eventId));
  }

  async adopt(sentinelId: string, eventIds: string[], accepted: number): Promise<void> {
    await this.o.db.tx(async (sql) => {
      const trace = await lockTrace(sql, sentinelId);
      const ids = remember(trace.eventIds, eventIds);
      const next = Math.max(trace.accepted, accepted);
      await sql.query("UPDATE webhook_traces SET accepted = $2, event_ids = $3::jsonb WHERE sentinel_id = $1", [
        sentinelId,
        next,
        JSON.stringify(ids),
      ]);
      this.acceptedOf.set(sentinelId, next);
    });
    for (const e of eventIds) this.learn(sentinelId, e);
  }

  async forget(sentinelId: string): Promise<void> {
    await this.o.db.query("DELETE FROM webhook_traces WHERE sentinel_id = $1", [sentinelId]);
    this.acceptedOf.delete(sentinelId);
  }

  /** The row's exact body (held since its row was read or added, else read), checked against its length and sha256. */
  async readBody(row: OutboxRow): Promise<Buffer> {
    let body = this.held.get(row.requestId);
    if (body) this.release(row.requestId, body);
    else {
      const { rows } = await this.o.db.query<{ body: Buffer }>(
        "SELECT body FROM webhook_outbox WHERE request_id = $1",
        [row.requestId],
      );
      body = rows[0]?.body;
      if (!body) throw new SvcError("not_found", `outbox row ${row.requestId} is gone from the team store`);
    }
    if (body.length !== row.bodyBytes.length || sha256(body) !== row.bodyBytes.sha256)
      throw new SvcError(
        "internal",
        `the stored body of ${row.requestId} does not match its recorded length and sha256`,
      );
    return body;
  }

  /**
   * Records an attempt or a status change of a pending row (false when it is gone or terminal).
   * A row left pending gets its next attempt's job, due after SPEC.md's wait, in the same transaction.
   */
  async update(
    requestId: string,
    next: { status: RowStatus; deliveryState: DeliveryState; deadReason?: DeadReason },
    options: { seen?: boolean; lazy?: boolean } = {},
  ): Promise<boolean> {
    const { deliveryState: d } = next;
    return this.o.db.tx(async (sql) => {
      const r = await sql.query(
        `UPDATE webhook_outbox SET status = $2, attempts = $3, last_error = $4, last_at = $5, dead_reason = $6,
           updated_at = $7, seen = seen OR $8
         WHERE request_id = $1 AND status = 'pending'`,
        [
          requestId,
          next.status,
          d.attempts,
          d.lastError,
          d.lastAt,
          next.deadReason ?? null,
          this.o.now(),
          options.seen === true && next.status !== "pending",
        ],
      );
      if (r.rowCount !== 1) return false;
      if (next.status === "pending") await this.schedule(sql, [requestId], retryWaitMs(d.attempts));
      return true;
    });
  }

  /** Terminal rows back to pending (attempts reset, same body and webhook-id), each with a job due now. */
  async replay(requestIds: readonly string[]): Promise<OutboxRow[]> {
    if (requestIds.length === 0) return [];
    return this.o.db.tx(async (sql) => {
      const at = this.o.now();
      const { rows } = await sql.query(
        `UPDATE webhook_outbox SET status = 'pending', attempts = 0, last_error = NULL, last_at = NULL, dead_reason = NULL,
           replays = replays + 1, replayed_at = $2, updated_at = $2
         WHERE request_id = ANY($1) AND status <> 'pending' RETURNING ${COLUMNS}`,
        [[...requestIds], at],
      );
      const changed = rows.map(toRow);
      await this.schedule(
        sql,
        changed.map((r) => r.requestId),
        0,
      );
      return changed;
    });
  }

  /** Pending rows get a fresh set of attempts (a resumed sentinel) and a job due now. */
  async restartAttempts(requestIds: readonly string[]): Promise<void> {
    if (requestIds.length === 0) return;
    await this.o.db.tx(async (sql) => {
      const { rows } = await sql.query<{ request_id: string }>(
        `UPDATE webhook_outbox SET attempts = 0, updated_at = $2 WHERE request_id = ANY($1) AND status = 'pending'
         RETURNING request_id`,
        [[...requestIds], this.o.now()],
      );
      await this.schedule(
        sql,
        rows.map((r) => r.request_id),
        0,
      );
    });
  }

  async kill(requestId: string, reason: DeadReason, lastError?: string): Promise<boolean> {
    return (await this.killWhere("request_id = $1", [requestId], reason, lastError)).length === 1;
  }

  killSentinel(sentinelId: string, reason: DeadReason): Promise<OutboxRow[]> {
    return this.killWhere("sentinel_id = $1", [sentinelId], reason);
  }

  async markSeen(...requestIds: string[]): Promise<void> {
    if (requestIds.length === 0) return;
    await this.o.db.query("UPDATE webhook_outbox SET seen = true WHERE request_id = ANY($1)", [requestIds]);
  }

  /**
   * Delivered rows are removed 24 hours after delivery (into their sentinel's trace); pending rows
   * older than 7 days become dead (`age_out`). Returns the rows that aged out.
   */
  async reap(): Promise<OutboxRow[]> {
    const now = this.o.now();
    await this.o.db.tx(async (sql) => {
      const { rows } = await sql.query<{ sentinel_id: string; event_id: string }>(
        `DELETE FROM webhook_outbox WHERE request_id IN (
           SELECT request_id FROM webhook_outbox WHERE status = 'delivered' AND updated_at + $1 <= $2
           ORDER BY updated_at FOR UPDATE SKIP LOCKED)
         RETURNING sentinel_id, event_id`,
        [LIMITS.deliveredRetentionMs, now],
      );
      await traceRemoved(sql, rows);
    });
    return this.killWhere(
      "created_at + $1 <= $2",
      [LIMITS.pendingMaxAgeMs, now],
      "age_out",
      `not delivered within ${LIMITS.pendingMaxAgeMs / 86_400_000} days`,
    );
  }

  /**
   * The safety net under the delivery jobs: each pending row whose next attempt is overdue by
   * `graceMs` (SPEC.md's wait after its last attempt, or its acceptance, replay or resume) gets a job
   * due now unless one is running or due in time. What it catches: a job that failed while
   * PostgreSQL restarted and waits in the queue's backoff (e^attempts seconds), one given up after
   * repeated failures, one lost. Rows `skip` names (a suspended sentinel's, kept for its resume)
   * are left alone. Returns the request ids given a job.
   */
  async redrive(skip: (sentinelId: string) => boolean, graceMs = REDRIVE_GRACE_MS): Promise<string[]> {
    const now = this.o.now();
    const { rows } = await this.o.db.query<{
      request_id: string;
      sentinel_id: string;
      attempts: number;
      last_at: string | null;
      updated_at: string;
    }>(
      `SELECT request_id, sentinel_id, attempts, last_at, updated_at FROM webhook_outbox
       WHERE status = 'pending' AND updated_at + $1 <= $2 ORDER BY created_at LIMIT $3`,
      [graceMs, now, REDRIVE_BATCH],
    );
    const due = rows.flatMap((r) => {
      if (skip(r.sentinel_id)) return [];
      const attempts = Number(r.attempts);
      const dueAt =
        attempts > 0 && r.last_at !== null ? Number(r.last_at) + retryWaitMs(attempts) : Number(r.updated_at);
      return dueAt + graceMs <= now ? [{ ...deliveryJobOf(r.request_id), runBy: new Date(dueAt + graceMs) }] : [];
    });
    if (due.length === 0) return [];
    const added = await this.o.db.tx((sql) => this.o.jobs.ensure(sql, due));
    if (added.length > 0)
      this.o.logger.warn("pending webhook rows were overdue; their delivery jobs were added again", {
        rows: added.length,
      });
    return added;
  }

  async close(): Promise<void> {
    this.held.clear();
    this.heldBytes = 0;
  }

  /** Adds the delivery job of each row, due in `afterMs`. */
  private async schedule(sql: TeamSql, requestIds: string[], afterMs: number): Promise<void> {
    const runAt = new Date(Date.now() + afterMs);
    for (const requestId of requestIds) await this.o.jobs.add(sql, deliveryJobOf(requestId, runAt));
  }

  /**
   * The oldest terminal rows (seen ones first), removed so one more row fits under the cap, into
   * their sentinels' traces; refuses (`unavailable`, as the file outbox does) when every row is pending.
   */
  private async evict(sql: TeamSql, input: { sentinelId: string; eventId: string }): Promise<OutboxRow[]> {
    const { rows: counted } = await sql.query<{ n: string }>("SELECT count(*) AS n FROM webhook_outbox");
    const need = Number(counted[0]!.n) + 1 - this.cap;
    if (need <= 0) return [];
    const { rows } = await sql.query(
      `DELETE FROM webhook_outbox WHERE request_id IN (
         SELECT request_id FROM webhook_outbox WHERE status <> 'pending'
         ORDER BY seen DESC, updated_at, request_id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING ${COLUMNS}`,
      [need],
    );
    if (rows.length < need) throw fullError(this.cap, input);
    const evicted = rows.map(toRow);
    await traceRemoved(
      sql,
      evicted.map((r) => ({ sentinel_id: r.sentinelId, event_id: r.eventId })),
    );
    return evicted;
  }

  private async killWhere(where: string, values: unknown[], reason: DeadReason, lastError?: string) {
    const n = values.length;
    const { rows } = await this.o.db.query(
      `UPDATE webhook_outbox SET status = 'dead', dead_reason = $${n + 1}, last_error = coalesce($${n + 2}, last_error),
         updated_at = $${n + 3}
       WHERE ${where} AND status = 'pending' RETURNING ${COLUMNS}`,
      [...values, reason, lastError ?? null, this.o.now()],
    );
    return rows.map(toRow);
  }

  private async select(tail: string, values: unknown[] = []): Promise<OutboxRow[]> {
    const { rows } = await this.o.db.query(`SELECT ${COLUMNS} FROM webhook_outbox ${tail}`, values);
    return rows.map(toRow);
  }

  /** Keeps a body (the oldest held go first past {@link HELD_BYTES}: another daemon may have sent them). */
  /**
   * Remembers an accepted event. Past {@link KNOWN_MAX} ids the cache starts again from the
   * database (rows and traces): an event it forgot meanwhile is still refused by the unique row.
   */
  private learn(sentinelId: string, eventId: string): void {
    this.known.add(rowKey(sentinelId, eventId));
    if (this.known.size <= KNOWN_MAX) return;
    this.known.clear();
    this.refresh().catch((err: Error) =>
      this.o.logger.warn("could not reload the team outbox's known events", { error: err.message }),
    );
  }

  private hold(requestId: string, body: Buffer): void {
    for (const [id, old] of this.held) {
      if (this.heldBytes + body.length <= HELD_BYTES) break;
      this.release(id, old);
    }
    if (body.length > HELD_BYTES) return;
    this.held.set(requestId, body);
    this.heldBytes += body.length;
  }

  private release(requestId: string, body: Buffer): void {
    this.held.delete(requestId);
    this.heldBytes -= body.length;
  }
}

/** Creates the sentinel's trace row if needed and locks it: accepts of one sentinel serialize here. */
async function lockTrace(sql: TeamSql, sentinelId: string): Promise<{ accepted: number; eventIds: string[] }> {
  // An upsert locks the row it updates: creating and locking take one statement.
  const { rows } = await sql.query<{ accepted: string; event_ids: string[] }>(
    `INSERT INTO webhook_traces (sentinel_id) VALUES ($1)
     ON CONFLICT (sentinel_id) DO UPDATE SET sentinel_id = EXCLUDED.sentinel_id RETURNING accepted, event_ids`,
    [sentinelId],
  );
  return { accepted: Number(rows[0]!.accepted), eventIds: rows[0]!.event_ids };
}

/** Counts removed rows into their sentinels' traces, keeping the last {@link TRACE_IDS} ids. */
async function traceRemoved(sql: TeamSql, rows: Array<{ sentinel_id: string; event_id: string }>): Promise<void> {
  const bySentinel = new Map<string, string[]>();
  for (const r of rows) bySentinel.set(r.sentinel_id, [...(bySentinel.get(r.sentinel_id) ?? []), r.event_id]);
  // In id order: two transactions evicting rows of the same sentinels lock their traces in one order.
  for (const sentinelId of [...bySentinel.keys()].sort()) {
    const ids = bySentinel.get(sentinelId)!;
    const trace = await lockTrace(sql, sentinelId);
    await sql.query("UPDATE webhook_traces SET removed = removed + $2, event_ids = $3::jsonb WHERE sentinel_id = $1", [
      sentinelId,
      ids.length,
      JSON.stringify(remember(trace.eventIds, ids)),
    ]);
  }
}

/** `ids` added as the newest (moved if present), the last {@link TRACE_IDS} kept. */
function remember(old: string[], ids: string[]): string[] {
  const set = new Set(old);
  for (const id of ids) {
    set.delete(id);
    set.add(id);
  }
  return [...set].slice(-TRACE_IDS);
}

function fullError(cap: number, input: { sentinelId: string; eventId: string }): SvcError {
  return new SvcError(
    "unavailable",
    `the webhook outbox is full: all ${cap} rows are pending delivery, so event ${input.eventId} for sentinel ${input.sentinelId} was not accepted; send it again once deliveries drain`,
  );
}

const sha256 = (body: Buffer): string => createHash("sha256").update(body).digest("hex");

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function toRow(r: Db): OutboxRow {
  const row: OutboxRow = {
    sentinelId: r.sentinel_id as string,
    requestId: r.request_id as string,
    eventId: r.event_id as string,
    bodyBytes: { file: "db", length: Number(r.body_length), sha256: r.body_sha256 as string },
    cursor: null,
    deliveryState: {
      attempts: Number(r.attempts),
      lastError: (r.last_error as string | null) ?? null,
      lastAt: num(r.last_at),
    },
    status: r.status as RowStatus,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
    seen: r.seen === true,
  };
  if (r.dead_reason) row.deadReason = r.dead_reason as DeadReason;
  if (Number(r.replays) > 0) {
    row.replays = Number(r.replays);
    row.replayedAt = Number(r.replayed_at);
  }
  return row;
}
