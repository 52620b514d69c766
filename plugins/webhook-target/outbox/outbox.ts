import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../core/plugin-api/index.js";
import { SvcError, diskFullError, roomFor, type SpaceProbe } from "../../../core/plugin-api/index.js";
import { LIMITS } from "../limits.js";
import { BodyStore, stagedRef } from "./body-store.js";
import { HotBodies } from "./hot-bodies.js";
import { Journal } from "./journal.js";
import { loadState, type LoadReport } from "./load-state.js";
import {
  listRetiredJournals,
  removeRetiredJournals,
  retiredJournalName,
  snapshotText,
  writeSnapshot,
  OUTBOX_FILES,
} from "./persistence.js";
import {
  isTerminal,
  type BodyRef,
  rowKey,
  type DeadReason,
  type DeliveryState,
  type NewRecord,
  type OutboxRow,
  type RowStatus,
  type SentinelTrace,
} from "./row.js";
import { RowTable } from "./row-table.js";

export interface OutboxOptions {
  home: string;
  now: () => number;
  /** A fresh request id (ulid-based, never containing `.`). */
  newId: () => string;
  logger: Logger;
  /** Row cap (default 2,000). */
  cap?: number;
  /**
   * Journal records between two compactions. Default: 2,048 or 8 per row, whichever is more, so
   * rewriting the snapshot (every row's metadata) costs at most 1/8 of a row per record.
   */
  compactEvery?: number;
  /** Body bytes held inline in the journal (and in memory) before a compaction moves them to files (default 8 MiB). */
  maxStagedBytes?: number;
  /** Bytes of pending rows' bodies kept in memory once in a segment, for their next attempts (default 8 MiB). */
  hotBodyBytes?: number;
  /** Reads the free space a compaction checks before it writes (default: `statfs` of the home). */
  space?: SpaceProbe;
}

/**
 * Records after a compaction skipped for lack of space before a batch tries again (the stop and
 * the next start always try).
 */
const NO_ROOM_RETRY_RECORDS = 256;

export interface AddResult {
  row: OutboxRow;
  /** False when a row for `(sentinelId, eventId)` already existed. */
  created: boolean;
  /** Terminal rows evicted to make room (the caller tells the engine about unseen ones). */
  evicted: OutboxRow[];
}

/**
 * The webhook outbox: rows unique per `(sentinelId, eventId)`, durable before {@link add} resolves,
 * with the transitions of SPEC.md's "Outbox row" table. Row metadata lives in memory and in
 * `sentinel-webhook-outbox.json` (a snapshot) plus `sentinel-webhook-outbox.journal` (appended
 * state changes, compacted into the snapshot). A new row's body rides inline in its journal record
 * (one fsync accepts an event) and moves at the next compaction to a segment file in
 * `sentinel-webhook-outbox.bodies/`, written once. A compaction stalls appends only to rotate the
 * journal; the segment and the snapshot are written while appends continue. See the README,
 * "Webhook target", for the layout and its crash rules.
 */
export class Outbox {
  private readonly table = new RowTable();
  private readonly adding = new Map<string, Promise<AddResult>>();
  private readonly evicting = new Set<string>();
  private journal!: Journal;
  private readonly cap: number;
  private readonly compactEvery: number | undefined;
  private readonly maxStagedBytes: number;
  /** The compaction whose segment and snapshot are being written, if any (at most one). */
  private compacting: Promise<void> | undefined;
  /** Retired journal files no durable snapshot covers yet. */
  private retired: string[] = [];
  /** After a compaction skipped for lack of space: the records since the snapshot before a batch tries again. */
  private noRoomUntil = 0;
  private readonly bodies: BodyStore;
  private readonly hot: HotBodies;
  /** What opening found in the files (damage, torn lines, a rebuilt snapshot). */
  loadReport?: LoadReport;

  private constructor(private readonly opts: OutboxOptions) {
    this.cap = opts.cap ?? LIMITS.outboxCap;
    this.compactEvery = opts.compactEvery;
    this.maxStagedBytes = opts.maxStagedBytes ?? 8 * 1024 * 1024;
    this.bodies = new BodyStore(join(opts.home, OUTBOX_FILES.bodies));
    this.hot = new HotBodies(opts.hotBodyBytes ?? 8 * 1024 * 1024);
  }

  static async open(opts: OutboxOptions): Promise<Outbox> {
    const outbox = new Outbox(opts);
    await outbox.load();
    return outbox;
  }

  /** Adds the row for an event, or returns the existing one (a duplicate never creates a second row). */
  add(input: { sentinelId: string; eventId: string; body: Buffer }): Promise<AddResult> {
    const key = rowKey(input.sentinelId, input.eventId);
    const existing = this.table.byEvent(input.sentinelId, input.eventId);
    if (existing) return Promise.resolve({ row: existing, created: false, evicted: [] });
    const inflight = this.adding.get(key);
    if (inflight) return inflight.then((r) => ({ row: r.row, created: false, evicted: [] }));
    const p = this.insert(input).finally(() => this.adding.delete(key));
    this.adding.set(key, p);
    return p;
  }

  get(requestId: string): OutboxRow | undefined {
    return this.table.get(requestId);
  }

  rowsOf(sentinelId: string): OutboxRow[] {
    return this.table
      .all()
      .filter((r) => r.sentinelId === sentinelId)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  pending(): OutboxRow[] {
    return this.table
      .all()
      .filter((r) => r.status === "pending")
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  /** Rows waiting and rows given up of the given sentinels (one pass; `svc status`). */
  counts(sentinelIds: ReadonlySet<string>): { pending: number; dead: number } {
    let pending = 0;
    let dead = 0;
    for (const r of this.table.all()) {
      if (!sentinelIds.has(r.sentinelId)) continue;
      if (r.status === "pending") pending++;
      else if (r.status === "dead") dead++;
    }
    return { pending, dead };
  }

  /** Delivered rows (kept 24 hours after delivery). */
  delivered(): OutboxRow[] {
    return this.table.all().filter((r) => r.status === "delivered");
  }

  /** Terminal rows whose event the engine has not yet been told about. */
  unseenTerminal(): OutboxRow[] {
    return this.table.all().filter((r) => isTerminal(r) && !r.seen);
  }

  get size(): number {
    return this.table.size;
  }

  /** True when the sentinel has (or had, see {@link RowTable.hasEvent}) a row for the event. */
  hasEvent(sentinelId: string, eventId: string): boolean {
    return this.table.hasEvent(sentinelId, eventId);
  }

  /** Events accepted for the sentinel so far, removed rows included. */
  accepted(sentinelId: string): number {
    return this.table.accepted(sentinelId);
  }

  /** Takes over an old per-sentinel dedup record (one durable append; adopting twice changes nothing more). */
  async adopt(sentinelId: string, eventIds: string[], accepted: number): Promise<void> {
    await this.journal.append([{ op: "adopt", sentinelId, eventIds, accepted }]);
  }

  /** Drops a removed sentinel's trace (its rows stay until evicted or reaped). */
  async forget(sentinelId: string): Promise<void> {
    await this.journal.append([{ op: "forget", sentinelId }]);
  }

  /** What stays of a sentinel's removed rows, or undefined (`svc store migrate` reads it). */
  trace(sentinelId: string): SentinelTrace | undefined {
    return this.table.traceOf(sentinelId);
  }

  /**
   * Adds rows moved from another store (`svc store migrate`) with their exact bodies and their
   * state, in one durable append of journal `add` records (body inline, as for a new row). A row
   * whose event the sentinel has or had, or whose request id is taken, is skipped: importing the
   * same rows twice adds nothing more. The row cap is not applied here; past it, terminal rows make
   * room as usual and new events wait while every row is pending. Returns the rows added.
   */
  async importRows(rows: ReadonlyArray<{ row: OutboxRow; body: Buffer }>): Promise<OutboxRow[]> {
    const keys = new Set<string>();
    const fresh = rows.filter(({ row }) => {
      const key = rowKey(row.sentinelId, row.eventId);
      if (keys.has(key) || this.knows(row.sentinelId, row.eventId) || this.hasEvent(row.sentinelId, row.eventId))
        return false;
      if (this.table.get(row.requestId)) return false;
      keys.add(key);
      return true;
    });
    if (fresh.length === 0) return [];
    const bodies = new Map(fresh.map(({ row, body }) => [row.requestId, body]));
    await this.journal.append(
      fresh.map(({ row, body }) => ({
        op: "add" as const,
        row: { ...row, cursor: null, bodyBytes: stagedRef(row.requestId, body) },
        body: body.toString("base64"),
      })),
      (rec) => (rec.op === "add" ? this.table.liveBodies.set(rec, bodies.get(rec.row.requestId)!) : undefined),
    );
    this.table.sortEvictionOrder();
    return fresh.flatMap(({ row }) => this.table.get(row.requestId) ?? []);
  }

  /** The row's exact body: from memory while staged or hot, else read from its segment and checked. */
  async readBody(row: OutboxRow): Promise<Buffer> {
    const held = this.table.staged.get(row.requestId) ?? this.hot.get(row.requestId);
    if (held) return held;
    const body = await this.bodies.read(row.bodyBytes);
    if (this.table.get(row.requestId)?.status === "pending") this.hot.put(row.requestId, body);
    return body;
  }

  /**
   * Records an attempt or a status change of a pending row. Returns false (and changes nothing)
   * when the row is gone or already terminal. `seen`: the engine was already told the event's
   * delivery is terminal, recorded in the same durable append. `lazy`: the change answers no
   * caller, so it rides with the journal's next write instead of starting one.
   */
  async update(
    requestId: string,
    next: { status: RowStatus; deliveryState: DeliveryState; deadReason?: DeadReason },
    options: { seen?: boolean; lazy?: boolean } = {},
  ): Promise<boolean> {
    const row = this.table.get(requestId);
    if (!row || isTerminal(row)) return false;
    const change: NewRecord = { op: "update", requestId, ...next, at: this.opts.now() };
    const seen = options.seen === true && next.status !== "pending";
    const [ok] = await this.journal.append(seen ? [change, { op: "seen", requestId }] : [change], undefined, {
      lazy: options.lazy === true,
    });
    if (next.status !== "pending") this.hot.delete(requestId);
    return ok === true;
  }

  /**
   * Moves terminal rows back to pending for a replay (one durable append): attempts reset, the
   * same stored body and webhook-id, `replays` counted. Returns the rows that changed (a row that
   * is pending, or gone, is left alone).
   */
  async replay(requestIds: readonly string[]): Promise<OutboxRow[]> {
    const rows = requestIds
      .map((id) => this.table.get(id))
      .filter((r): r is OutboxRow => r !== undefined && isTerminal(r));
    if (rows.length === 0) return [];
    const at = this.opts.now();
    const results = await this.journal.append(rows.map((r) => ({ op: "replay" as const, requestId: r.requestId, at })));
    return rows.filter((_, i) => results[i] === true);
  }

  /**
   * Gives pending rows a fresh set of attempts (their sentinel's delivery resumed after a
   * suspension): `attempts` back to 0, the last error kept; one durable append.
   */
  async restartAttempts(requestIds: readonly string[]): Promise<void> {
    const rows = requestIds
      .map((id) => this.table.get(id))
      .filter((r): r is OutboxRow => r !== undefined && r.status === "pending" && r.deliveryState.attempts > 0);
    if (rows.length === 0) return;
    const at = this.opts.now();
    await this.journal.append(
      rows.map((r) => ({
        op: "update" as const,
        requestId: r.requestId,
        status: "pending" as const,
        deliveryState: { ...r.deliveryState, attempts: 0 },
        at,
      })),
    );
  }

  /** Moves a pending row to dead with `reason`, keeping its delivery state. */
  async kill(requestId: string, reason: DeadReason, lastError?: string): Promise<boolean> {
    const row = this.table.get(requestId);
    return row !== undefined && (await this.killAll([row], reason, lastError)).length === 1;
  }

  /** Kills every pending row of a sentinel (one durable append); returns the rows that changed. */
  killSentinel(sentinelId: string, reason: DeadReason): Promise<OutboxRow[]> {
    return this.killAll(this.rowsOf(sentinelId), reason);
  }

  /** Records that the engine marked the rows' events seen (one durable append for all of them). */
  async markSeen(...requestIds: string[]): Promise<void> {
    const known = requestIds.filter((id) => this.table.get(id));
    if (known.length > 0) await this.journal.append(known.map((requestId) => ({ op: "seen" as const, requestId })));
  }

  /**
   * The reaping rules: delivered rows are removed 24 hours after delivery; pending rows older
   * than 7 days become dead (`age_out`). Returns the rows that aged out.
   */
  async reap(): Promise<OutboxRow[]> {
    const now = this.opts.now();
    const expiredDelivered = this.table
      .all()
      .filter((r) => r.status === "delivered" && r.updatedAt + LIMITS.deliveredRetentionMs <= now);
    await this.remove(expiredDelivered);
    const old = this.pending().filter((r) => r.createdAt + LIMITS.pendingMaxAgeMs <= now);
    return this.killAll(old, "age_out", `not delivered within ${LIMITS.pendingMaxAgeMs / 86_400_000} days`);
  }

  /**
   * Resolves once nothing writes in the background: no journal batch, no compaction (nothing else
   * runs unawaited). An add resolves before the compaction its batch may start (the hook run after
   * each batch), so the journal is drained first.
   */
  async settled(): Promise<void> {
    await this.journal.drained();
    while (this.compacting) await this.compacting;
  }

  /** Compacts now and waits until the snapshot is durable (also done at open and close). */
  compact(): Promise<void> {
    return this.journal.exclusive(async () => {
      await this.compacting;
      await (await this.startCompaction()).done;
    });
  }

  /** Compacts, then closes the journal (also when the final compaction fails). */
  async close(): Promise<void> {
    try {
      await this.compact();
    } finally {
      await this.journal.close();
    }
  }

  private async insert(input: { sentinelId: string; eventId: string; body: Buffer }): Promise<AddResult> {
    const evict = this.chooseEvictions(input);
    const requestId = this.opts.newId();
    const bodyBytes = stagedRef(requestId, input.body);
    const now = this.opts.now();
    const row: OutboxRow = {
      sentinelId: input.sentinelId,
      requestId,
      eventId: input.eventId,
      bodyBytes,
      cursor: null,
      deliveryState: { attempts: 0, lastError: null, lastAt: null },
      status: "pending",
      createdAt: now,
      updatedAt: now,
      seen: false,
    };
    let results: boolean[];
    try {
      results = await this.journal.append(
        [
          ...evict.map((r) => ({ op: "remove" as const, requestId: r.requestId })),
          { op: "add" as const, row, body: input.body.toString("base64") },
        ],
        (rec) => (rec.op === "add" ? this.table.liveBodies.set(rec, input.body) : undefined),
      );
    } finally {
      evict.forEach((r) => this.evicting.delete(r.requestId));
    }
    for (const r of evict) this.hot.delete(r.requestId);
    await Promise.all(evict.map((r) => this.bodies.release(r.bodyBytes).catch(() => undefined)));
    return { row: this.table.get(requestId)!, created: results.at(-1) === true, evicted: evict };
  }

  /**
   * The refusal {@link add} would give this event now because every row is pending (no room under
   * the cap and no terminal row to evict), or undefined when it may be accepted (or is already
   * known). Lets a caller refuse a full outbox's events before building their bodies.
   */
  refusal(sentinelId: string, eventId: string, options: { batch?: boolean } = {}): SvcError | undefined {
    // The same count as chooseEvictions: terminal rows not already being evicted.
    const need = this.table.size - this.evicting.size + this.adding.size + 1 - this.cap;
    // Room without counting (the usual case at the cap: terminal rows to evict).
    if (need <= 0 || this.table.terminalCount - this.evicting.size >= need) return undefined;
    let evictingTerminal = 0;
    for (const id of this.evicting) if (isTerminal(this.table.get(id) ?? { status: "pending" })) evictingTerminal++;
    if (this.table.terminalCount - evictingTerminal >= need || this.knows(sentinelId, eventId)) return undefined;
    return this.fullError({ sentinelId, eventId }, options.batch === true);
  }

  /** True when the event has a row, or one is being added ({@link add} answers with it). */
  knows(sentinelId: string, eventId: string): boolean {
    return this.table.byEvent(sentinelId, eventId) !== undefined || this.adding.has(rowKey(sentinelId, eventId));
  }

  /** `batch`: the refusal also serves the batch's new events after this one. */
  private fullError(input: { sentinelId: string; eventId: string }, batch = false): SvcError {
    const what = batch
      ? `event ${input.eventId} for sentinel ${input.sentinelId} (and the batch's new events after it) was not accepted; send them again`
      : `event ${input.eventId} for sentinel ${input.sentinelId} was not accepted; send it again`;
    return new SvcError(
      "unavailable",
      `the webhook outbox is full: all ${this.cap} rows are pending delivery, so ${what} once deliveries drain`,
    );
  }

  /** The oldest terminal rows to evict so one more row fits under the cap; never a pending row. */
  private chooseEvictions(input: { sentinelId: string; eventId: string }): OutboxRow[] {
    const need = this.table.size - this.evicting.size + this.adding.size + 1 - this.cap;
    if (need <= 0) return [];
    const candidates = this.table.evictionCandidates(need, this.evicting);
    if (candidates.length < need) throw this.fullError(input);
    candidates.forEach((r) => this.evicting.add(r.requestId));
    return candidates;
  }

  /**
   * Moves the pending ones of `rows` to dead with `reason` (keeping their delivery state, with
   * `lastError` if given) in one durable append; returns the rows that changed.
   */
  private async killAll(rows: OutboxRow[], reason: DeadReason, lastError?: string): Promise<OutboxRow[]> {
    const live = rows.filter((r) => !isTerminal(r));
    if (live.length === 0) return [];
    const at = this.opts.now();
    const results = await this.journal.append(
      live.map((row) => ({
        op: "update" as const,
        requestId: row.requestId,
        status: "dead" as const,
        deliveryState: lastError === undefined ? row.deliveryState : { ...row.deliveryState, lastError },
        deadReason: reason,
        at,
      })),
    );
    for (const row of live) this.hot.delete(row.requestId);
    // Rows are updated in place: the objects passed in now show their new state.
    return live.filter((_, i) => results[i] === true);
  }

  private async remove(rows: OutboxRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.journal.append(rows.map((r) => ({ op: "remove" as const, requestId: r.requestId })));
    for (const r of rows) this.hot.delete(r.requestId);
    await Promise.all(rows.map((r) => this.bodies.release(r.bodyBytes).catch(() => undefined)));
  }

  private async load(): Promise<void> {
    const { home, logger } = this.opts;
    await this.bodies.init();
    this.retired = (await listRetiredJournals(home)).map((r) => r.file);
    const state = await loadState(home, this.bodies, logger, this.opts.now);
    this.loadReport = state.report;
    const table = this.table;
    table.loadTraces(state.traces);
    for (const row of state.rows) table.apply({ seq: 0, op: "add", row });
    for (const rec of state.journal) if (rec.seq > state.seq) table.apply(rec);
    table.appliedSeq = Math.max(table.appliedSeq, state.seq);
    table.sortEvictionOrder();
    const lostBodies = await this.dropOrphansAndLostBodies();
    const r = state.report;
    const unrecoverable = r.damaged.reduce((n, d) => n + d.lines.length, 0);
    const missing = r.missing.reduce((n, m) => n + m.records, 0);
    logger[unrecoverable > 0 || missing > 0 || r.rebuilt || lostBodies > 0 ? "error" : "info"](
      "webhook outbox loaded",
      {
        rows: table.size,
        pending: this.pending().length,
        recordsReplayed: r.records,
        recordsUnrecoverable: unrecoverable,
        recordsMissing: missing,
        tornLinesDropped: r.torn.length,
        rowsRebuiltFromBodies: r.rebuilt?.rows ?? 0,
        rowsWithLostBodies: lostBodies,
      },
    );
    this.journal = await Journal.open(join(home, OUTBOX_FILES.journal), table.appliedSeq, {
      apply: table.apply,
      between: async () => {
        const every = this.compactEvery ?? Math.max(2_048, 8 * table.size);
        if (this.compacting || (table.sinceSnapshot < every && table.stagedBytes < this.maxStagedBytes)) return;
        if (table.sinceSnapshot < this.noRoomUntil) return;
        await this.startCompaction().catch((err: Error) =>
          logger.error("outbox compaction failed", { error: err.message }),
        );
      },
    });
    try {
      await this.compact();
    } catch (err) {
      // A full disk never keeps the daemon from starting: the files on disk are the last consistent
      // ones (a compaction replaces nothing until its snapshot is durable); the next one retries.
      const full = diskFullError(err);
      if (!full) {
        await this.journal.close().catch(() => undefined);
        throw err;
      }
      logger.error("outbox compaction at start failed; the outbox runs on its journal until a compaction succeeds", {
        error: full.message,
      });
    }
  }

  /**
   * Deletes body files no row references; a pending row whose body is gone becomes dead. Counts
   * the references. Returns how many pending rows lost their body.
   */
  private async dropOrphansAndLostBodies(): Promise<number> {
    let lost = 0;
    const files = new Set(await this.bodies.list());
    for (const f of files) if (f.endsWith(".bin")) this.bodies.noteSize(f, (await stat(join(this.bodies.dir, f))).size);
    const referenced = new Set<string>();
    for (const row of this.table.all()) {
      const staged = this.table.staged.has(row.requestId);
      if (files.has(row.bodyBytes.file) || staged) {
        referenced.add(row.bodyBytes.file);
        this.bodies.retain(row.bodyBytes);
      } else if (row.status === "pending") {
        row.status = "dead";
        row.deadReason = "delivered_rejected";
        row.deliveryState = { ...row.deliveryState, lastError: "the stored body is missing from the outbox" };
        row.updatedAt = this.opts.now();
        this.opts.logger.error("outbox row lost its stored body", { sentinelId: row.sentinelId, eventId: row.eventId });
        lost++;
      }
    }
    for (const f of files) if (!referenced.has(f)) await this.bodies.removeFile(f);
    return lost;
  }

  /**
   * Stages the live bodies of sparse segments (at most {@link maxStagedBytes} per compaction), so
   * this compaction moves them to its segment and the sparse ones get deleted: disk use stays near
   * the live bodies' size. Each comes through {@link readBody}: a pending row's body is usually
   * still in memory, and appends wait while this runs. A body that fails its check stays where it is.
   */
  private async restageSparse(): Promise<void> {
    const sparse = this.bodies.sparse();
    if (sparse.size === 0) return;
    let budget = this.maxStagedBytes;
    for (const row of this.table.all()) {
      if (budget <= 0) break;
      if (!sparse.has(row.bodyBytes.file) || this.table.staged.has(row.requestId)) continue;
      const body = await this.readBody(row).catch(() => undefined);
      if (!body || this.table.get(row.requestId) !== row || this.table.staged.has(row.requestId)) continue;
      this.table.stage(row.requestId, body);
      budget -= body.length;
    }
  }

  /**
   * Starts a compaction; call only while no journal batch is being written. Synchronously places
   * the staged bodies in a new segment (refs only) and captures the snapshot text at the applied
   * sequence number, then rotates the journal (the only part appends wait for). The segment, the
   * snapshot and the removal of the retired journals then proceed in the background
   * ({@link compacting}; `done` rejects if it fails); staged bodies are dropped from memory only once the
   * snapshot is durable. When the segment and the snapshot would not leave the daemon's room free
   * (core/storage/free-space.ts), nothing is written or rotated: a warning says so, and `done` resolves.
   */
  private async startCompaction(): Promise<{ done: Promise<void> }> {
    await this.restageSparse();
    const table = this.table;
    const seq = table.appliedSeq;
    const segment = this.bodies.segmentName(seq);
    const staged = [...table.staged].map(([requestId, body]) => ({
      requestId,
      sentinelId: table.get(requestId)?.sentinelId,
      eventId: table.get(requestId)?.eventId,
      body,
    }));
    const { entries, chunks } = this.bodies.plan(segment, staged);
    const superseded: BodyRef[] = [];
    for (const e of entries) {
      const row = table.get(e.requestId)!;
      superseded.push(row.bodyBytes);
      row.bodyBytes = e.ref;
      this.bodies.retain(e.ref);
    }
    const text = snapshotText(seq, table.all(), table.traceSnapshot());
    // Optional: it runs only when the segment and the snapshot fit and leave the daemon's room free
    // (runtime.json, the next records); otherwise the journal keeps everything until a later try.
    const segmentBytes = chunks.reduce((n, c) => n + c.length, 0);
    const room = await roomFor(
      this.opts.home,
      [Buffer.byteLength(text), ...(entries.length > 0 ? [segmentBytes] : [])],
      this.opts.space,
    );
    if (room && !room.ok) {
      entries.forEach((e, i) => {
        const row = table.get(e.requestId);
        if (row?.bodyBytes === e.ref) row.bodyBytes = superseded[i]!;
      });
      await Promise.all(entries.map((e) => this.bodies.release(e.ref).catch(() => undefined)));
      await this.bodies.settle(segment).catch(() => undefined);
      this.noRoomUntil = table.sinceSnapshot + NO_ROOM_RETRY_RECORDS;
      this.opts.logger.warn("outbox compaction skipped: not enough free space; the journal keeps every record", {
        freeBytes: room.free,
        neededBytes: room.need,
        segmentBytes,
        snapshotBytes: Buffer.byteLength(text),
        retry: `after ${NO_ROOM_RETRY_RECORDS} more records, at the stop or at the next start`,
      });
      return { done: Promise.resolve() };
    }
    this.noRoomUntil = 0;
    const retiring = retiredJournalName(seq);
    // A retired journal of this seq (left by a failed compaction) means the live one holds no record yet.
    if (!this.retired.includes(retiring)) {
      try {
        await this.journal.rotate(join(this.opts.home, retiring));
      } catch (err) {
        await this.bodies.settle(segment);
        throw err;
      }
      this.retired.push(retiring);
    }
    table.sinceSnapshot = 0;
    const covered = [...this.retired];
    const run = (async () => {
      try {
        if (entries.length > 0) await this.bodies.writeSegment(segment, chunks);
        await writeSnapshot(this.opts.home, text);
      } finally {
        await this.bodies.settle(segment).catch(() => undefined);
      }
      this.retired = this.retired.filter((f) => !covered.includes(f));
      for (const e of entries) {
        if (table.staged.get(e.requestId) !== e.body) continue;
        table.unstage(e.requestId);
        if (table.get(e.requestId)?.status === "pending") this.hot.put(e.requestId, e.body);
      }
      await Promise.all(superseded.map((ref) => this.bodies.release(ref).catch(() => undefined)));
      await removeRetiredJournals(this.opts.home, covered);
    })();
    this.compacting = run
      .catch((err: Error) => this.opts.logger.error("outbox compaction failed", { error: err.message }))
      .finally(() => (this.compacting = undefined));
    return { done: run };
  }
}
