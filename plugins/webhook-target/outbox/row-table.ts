import { isTerminal, rowKey, TRACE_IDS, type JournalRecord, type OutboxRow, type SentinelTrace } from "./row.js";

/** A sentinel's trace in memory: the ids as a set in insertion order (oldest first). */
interface Trace {
  removed: number;
  ids: Set<string>;
}

/**
 * The outbox's in-memory state and its one transition function, {@link apply}, used alike for
 * live journal records (after they are durable) and for replay at startup, so both always agree.
 * Holds every row's metadata and the bodies of rows added since the last compaction.
 */
export class RowTable {
  private readonly rows = new Map<string, OutboxRow>();
  private readonly byKey = new Map<string, string>();
  /** Bodies of rows added since the last compaction (inline in the journal, not yet in files). */
  readonly staged = new Map<string, Buffer>();
  stagedBytes = 0;
  /** Highest sequence number applied. */
  appliedSeq = 0;
  /** Records applied since the last snapshot. */
  sinceSnapshot = 0;
  /** Live add records' bodies, so applying them does not decode base64 again. */
  readonly liveBodies = new WeakMap<JournalRecord, Buffer>();
  /** Terminal rows in the order they became terminal (or were seen): eviction candidates, oldest first. */
  private readonly terminalSeen = new Set<string>();
  private readonly terminalUnseen = new Set<string>();
  /** Rows per sentinel (whatever their status). */
  private readonly perSentinel = new Map<string, number>();
  /** What stays of each sentinel's removed rows. */
  private readonly traces = new Map<string, Trace>();

  get(requestId: string): OutboxRow | undefined {
    return this.rows.get(requestId);
  }

  byEvent(sentinelId: string, eventId: string): OutboxRow | undefined {
    const id = this.byKey.get(rowKey(sentinelId, eventId));
    return id === undefined ? undefined : this.rows.get(id);
  }

  /**
   * True when the sentinel has a row for the event, or had one that was removed (its trace): the
   * outbox is the webhook target's only record of an accepted event.
   */
  hasEvent(sentinelId: string, eventId: string): boolean {
    return this.byKey.has(rowKey(sentinelId, eventId)) || (this.traces.get(sentinelId)?.ids.has(eventId) ?? false);
  }

  /** Events accepted for the sentinel: its rows, whatever their status, and its removed ones. */
  accepted(sentinelId: string): number {
    return (this.perSentinel.get(sentinelId) ?? 0) + (this.traces.get(sentinelId)?.removed ?? 0);
  }

  /** One sentinel's trace, or undefined when it has none. */
  traceOf(sentinelId: string): SentinelTrace | undefined {
    const t = this.traces.get(sentinelId);
    return t && { removed: t.removed, eventIds: [...t.ids] };
  }

  /** Every sentinel's trace, for the snapshot. */
  traceSnapshot(): Record<string, SentinelTrace> {
    const out: Record<string, SentinelTrace> = {};
    for (const [id, t] of this.traces) out[id] = { removed: t.removed, eventIds: [...t.ids] };
    return out;
  }

  /** Restores the traces of a snapshot (at load, before its journal replays). */
  loadTraces(traces: Record<string, SentinelTrace>): void {
    for (const [id, t] of Object.entries(traces)) {
      const trace = this.trace(id);
      trace.removed = t.removed;
      this.remember(trace, t.eventIds);
    }
  }

  all(): OutboxRow[] {
    return [...this.rows.values()];
  }

  get size(): number {
    return this.rows.size;
  }

  /** Terminal rows (the eviction candidates). */
  get terminalCount(): number {
    return this.terminalSeen.size + this.terminalUnseen.size;
  }

  /**
   * The first `n` terminal rows not in `skip`, oldest first, rows the engine was told about before
   * the others (fewer when there are not that many).
   */
  evictionCandidates(n: number, skip: ReadonlySet<string>): OutboxRow[] {
    const out: OutboxRow[] = [];
    if (n <= 0) return out;
    for (const set of [this.terminalSeen, this.terminalUnseen])
      for (const id of set) {
        if (skip.has(id)) continue;
        out.push(this.rows.get(id)!);
        if (out.length >= n) return out;
      }
    return out;
  }

  /** Re-sorts the eviction order by `updatedAt` (after loading, when replay order may differ). */
  sortEvictionOrder(): void {
    for (const set of [this.terminalSeen, this.terminalUnseen]) {
      const ids = [...set].sort((a, b) => this.rows.get(a)!.updatedAt - this.rows.get(b)!.updatedAt);
      set.clear();
      ids.forEach((id) => set.add(id));
    }
  }

  /** Applies one record; false when it changed nothing (e.g. an update of a terminal row). */
  apply = (rec: JournalRecord): boolean => {
    if (rec.seq > this.appliedSeq) this.appliedSeq = rec.seq;
    this.sinceSnapshot++;
    switch (rec.op) {
      case "add": {
        const key = rowKey(rec.row.sentinelId, rec.row.eventId);
        const owner = this.byKey.get(key);
        if (owner !== undefined && owner !== rec.row.requestId) return false;
        if (!this.rows.has(rec.row.requestId))
          this.perSentinel.set(rec.row.sentinelId, (this.perSentinel.get(rec.row.sentinelId) ?? 0) + 1);
        this.rows.set(rec.row.requestId, { ...rec.row });
        this.byKey.set(key, rec.row.requestId);
        this.track(rec.row);
        const body = this.liveBodies.get(rec) ?? (rec.body !== undefined ? Buffer.from(rec.body, "base64") : undefined);
        if (body) this.stage(rec.row.requestId, body);
        return true;
      }
      case "update": {
        const row = this.rows.get(rec.requestId);
        if (!row || isTerminal(row)) return false;
        row.status = rec.status;
        row.deliveryState = rec.deliveryState;
        row.updatedAt = rec.at;
        if (rec.deadReason) row.deadReason = rec.deadReason;
        this.track(row);
        return true;
      }
      case "seen": {
        const row = this.rows.get(rec.requestId);
        if (!row) return false;
        row.seen = true;
        this.track(row);
        return true;
      }
      case "replay": {
        const row = this.rows.get(rec.requestId);
        if (!row || !isTerminal(row)) return false;
        row.status = "pending";
        row.deliveryState = { attempts: 0, lastError: null, lastAt: null };
        delete row.deadReason;
        row.replays = (row.replays ?? 0) + 1;
        row.replayedAt = rec.at;
        row.updatedAt = rec.at;
        // Pending again: no longer an eviction candidate.
        this.terminalSeen.delete(rec.requestId);
        this.terminalUnseen.delete(rec.requestId);
        return true;
      }
      case "remove": {
        const row = this.rows.get(rec.requestId);
        if (!row) return false;
        this.rows.delete(rec.requestId);
        this.byKey.delete(rowKey(row.sentinelId, row.eventId));
        const left = (this.perSentinel.get(row.sentinelId) ?? 1) - 1;
        if (left > 0) this.perSentinel.set(row.sentinelId, left);
        else this.perSentinel.delete(row.sentinelId);
        const trace = this.trace(row.sentinelId);
        trace.removed += 1;
        this.remember(trace, [row.eventId]);
        this.terminalSeen.delete(rec.requestId);
        this.terminalUnseen.delete(rec.requestId);
        this.unstage(rec.requestId);
        return true;
      }
      case "adopt": {
        // Idempotent: adopting the same old record twice (a crash before its files were removed) changes nothing more.
        const trace = this.trace(rec.sentinelId);
        trace.removed = Math.max(trace.removed, rec.accepted - (this.perSentinel.get(rec.sentinelId) ?? 0));
        this.remember(
          trace,
          rec.eventIds.filter((e) => !this.byKey.has(rowKey(rec.sentinelId, e))),
        );
        return true;
      }
      case "forget":
        return this.traces.delete(rec.sentinelId);
    }
  };

  private trace(sentinelId: string): Trace {
    let t = this.traces.get(sentinelId);
    if (!t) this.traces.set(sentinelId, (t = { removed: 0, ids: new Set() }));
    return t;
  }

  /** Adds ids to a trace (as the newest), keeping the last {@link TRACE_IDS}. */
  private remember(trace: Trace, eventIds: string[]): void {
    for (const id of eventIds) {
      trace.ids.delete(id);
      trace.ids.add(id);
    }
    while (trace.ids.size > TRACE_IDS) trace.ids.delete(trace.ids.values().next().value as string);
  }

  private track(row: OutboxRow): void {
    if (!isTerminal(row)) return;
    if (row.seen) {
      this.terminalUnseen.delete(row.requestId);
      if (!this.terminalSeen.has(row.requestId)) this.terminalSeen.add(row.requestId);
    } else if (!this.terminalSeen.has(row.requestId)) {
      this.terminalUnseen.add(row.requestId);
    }
  }

  unstage(requestId: string): void {
    const body = this.staged.get(requestId);
    if (!body) return;
    this.staged.delete(requestId);
    this.stagedBytes -= body.length;
  }

  /** Holds a body in memory until the next durable compaction has placed it. */
  stage(requestId: string, body: Buffer): void {
    this.unstage(requestId);
    this.staged.set(requestId, body);
    this.stagedBytes += body.length;
  }
}
