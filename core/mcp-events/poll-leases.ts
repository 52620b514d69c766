/**
 * `events/poll`: no subscribe step and no webhook. The first poll of `(caller, name, arguments)`
 * opens a lease; from then on every ingested event its clauses match (the engine's own matcher,
 * through an ingest observer) goes into the lease's buffer, bounded by count and age. A poll
 * answers the events after its cursor, at most `maxEvents` of them (`hasMore` when more wait), or
 * waits up to `timeoutMs` for the first to arrive. A lease lapses when nobody polls it for a while.
 */
import type { SvcEvent } from "../plugin-api/events.js";
import { toEventOccurrence, type EventOccurrence } from "../plugin-api/mcp-event.js";
import type { Clock, Random } from "../runtime/clock.js";
import type { EventFilter, SentinelService } from "../sentinels/service.js";
import type { EventCatalog } from "./catalog-types.js";
import { resolveEventType } from "./event-types.js";
import { MCP_EVENTS_LIMITS as L } from "./limits.js";
import { decodePollCursor, encodePollCursor } from "./poll-cursor.js";
import { asEventsError, exhausted, invalidParams } from "./rpc-errors.js";
import { canonicalJson } from "./subscription-id.js";

export interface PollInput {
  name: string;
  arguments?: Record<string, unknown>;
  /** null or absent: start from now. */
  cursor?: string | null;
  maxAgeMs?: number;
  maxEvents?: number;
  timeoutMs?: number;
}

export interface PollResult {
  events: EventOccurrence[];
  cursor: string;
  hasMore: boolean;
  nextPollMs: number;
  truncated: boolean;
}

export interface PollLeaseDeps {
  sentinels: Pick<SentinelService, "observeIngest" | "eventFilter">;
  catalog: () => EventCatalog;
  clock: Clock;
  random: Random;
}

interface Entry {
  seq: number;
  /** When it was ingested (retention and `maxAgeMs` count from here). */
  at: number;
  event: SvcEvent;
}

interface Lease {
  principalKey: string;
  name: string;
  provider: string;
  filter: EventFilter;
  /** Tells this lease from an earlier one of the same key (cursors name it). */
  gen: string;
  entries: Entry[];
  ids: Set<string>;
  nextSeq: number;
  lastPollAt: number;
  waiters: Set<() => void>;
}

export class PollLeases {
  /** This daemon boot: a cursor of another one is a gap. */
  private readonly boot: string;
  private readonly leases = new Map<string, Lease>();
  private readonly opening = new Map<string, Promise<Lease>>();
  private readonly byProvider = new Map<string, Set<Lease>>();
  private readonly stopObserving: () => void;
  private draining = false;

  constructor(private readonly deps: PollLeaseDeps) {
    this.boot = deps.random.hex(8);
    this.stopObserving = deps.sentinels.observeIngest((provider, events) => this.ingested(provider, events));
  }

  async poll(principalKey: string, input: PollInput): Promise<PollResult> {
    const args = input.arguments ?? {};
    const resolved = await resolveEventType(this.deps.catalog(), input.name, args);
    const lease = await this.leaseFor(principalKey, input.name, args, resolved);
    lease.lastPollAt = this.deps.clock.now();
    if (input.cursor === undefined || input.cursor === null)
      return answer([], this.cursorAt(lease, lease.nextSeq), false, false);
    const at = decodePollCursor(input.cursor);
    const max = Math.min(input.maxEvents ?? L.pollMaxEventsDefault, L.pollMaxEventsMax);
    // A cursor of another boot or lease: a gap; what this lease holds all came after it.
    if (at.boot !== this.boot || at.lease !== lease.gen)
      return { ...this.read(lease, 0, max, input.maxAgeMs), truncated: true };
    if (at.seq > lease.nextSeq)
      throw invalidParams(
        "invalid_cursor",
        "cursor is ahead of this poll's events: pass the cursor of the last answer, or null to start from now",
      );
    let out = this.read(lease, at.seq, max, input.maxAgeMs);
    const timeoutMs = Math.min(input.timeoutMs ?? 0, L.pollTimeoutMaxMs);
    if (out.events.length === 0 && !out.truncated && timeoutMs > 0 && !this.draining) {
      await this.wait(lease, timeoutMs);
      out = this.read(lease, at.seq, max, input.maxAgeMs);
    }
    lease.lastPollAt = this.deps.clock.now();
    return out;
  }

  /** Closes the leases nobody polled for {@link L.pollLeaseIdleMs}; returns how many. */
  sweep(): number {
    const now = this.deps.clock.now();
    let closed = 0;
    for (const [key, lease] of this.leases) {
      if (lease.waiters.size > 0 || lease.lastPollAt + L.pollLeaseIdleMs > now) continue;
      this.leases.delete(key);
      this.byProvider.get(lease.provider)?.delete(lease);
      closed++;
    }
    return closed;
  }

  /** The daemon is stopping: waiting polls answer now, and later ones do not wait. */
  drain(): void {
    this.draining = true;
    for (const lease of this.leases.values()) wake(lease);
  }

  close(): void {
    this.drain();
    this.stopObserving();
  }

  /** Open leases (tests, status). */
  size(): number {
    return this.leases.size;
  }

  /** Polls waiting for an event now (tests, status). */
  waiting(): number {
    let n = 0;
    for (const lease of this.leases.values()) n += lease.waiters.size;
    return n;
  }

  private async leaseFor(
    principalKey: string,
    name: string,
    args: Record<string, unknown>,
    resolved: { provider: string; match: unknown },
  ): Promise<Lease> {
    const key = `${principalKey}\n${canonicalJson([name, args])}`;
    const open = this.leases.get(key) ?? this.opening.get(key);
    if (open) return open;
    const max = L.pollLeasesPerPrincipal;
    const held =
      [...this.leases.values()].filter((l) => l.principalKey === principalKey).length +
      [...this.opening.keys()].filter((k) => k.startsWith(`${principalKey}\n`)).length;
    if (held >= max)
      throw exhausted(
        "pollLeases",
        max,
        `this caller polls ${max} event subscriptions, the most svc keeps per caller; one lapses ${L.pollLeaseIdleMs / 60_000} minutes after its last poll` +
          (principalKey === "loopback"
            ? "; every local caller without a token shares these: send the bearer token (Authorization: Bearer) or a session token (X-Svc-Session-Token) to poll under a key of your own"
            : ""),
      );
    const opening = (async () => {
      const filter = await this.deps.sentinels
        .eventFilter(resolved.provider, resolved.match)
        .catch((err: unknown) => Promise.reject(asEventsError(err)));
      const lease: Lease = {
        principalKey,
        name,
        provider: resolved.provider,
        filter,
        gen: this.deps.random.hex(8),
        entries: [],
        ids: new Set(),
        nextSeq: 0,
        lastPollAt: this.deps.clock.now(),
        waiters: new Set(),
      };
      this.leases.set(key, lease);
      let set = this.byProvider.get(lease.provider);
      if (!set) this.byProvider.set(lease.provider, (set = new Set()));
      set.add(lease);
      return lease;
    })();
    this.opening.set(key, opening);
    try {
      return await opening;
    } finally {
      this.opening.delete(key);
    }
  }

  private ingested(provider: string, events: readonly SvcEvent[]): void {
    const leases = this.byProvider.get(provider);
    if (!leases?.size) return;
    const now = this.deps.clock.now();
    for (const lease of leases) {
      let added = false;
      for (const event of events) {
        // The same event pushed again (a retried push) is kept once.
        if (lease.ids.has(event.id) || !lease.filter(event)) continue;
        lease.entries.push({ seq: lease.nextSeq++, at: now, event });
        lease.ids.add(event.id);
        added = true;
      }
      if (!added) continue;
      trim(lease, now);
      wake(lease);
    }
  }

  /** The events after `from` (at most `max`), skipping what retention or `maxAgeMs` removed (then `truncated`). */
  private read(lease: Lease, from: number, max: number, maxAgeMs: number | undefined): PollResult {
    const now = this.deps.clock.now();
    trim(lease, now);
    const first = lease.entries[0]?.seq ?? lease.nextSeq;
    let start = Math.max(from, first);
    let truncated = from < first;
    if (maxAgeMs !== undefined) {
      const floor = now - maxAgeMs;
      while (start < lease.nextSeq && lease.entries[start - first]!.at < floor) {
        start++;
        truncated = true;
      }
    }
    const batch = lease.entries.slice(start - first, start - first + max);
    const end = start + batch.length;
    const events = batch.map((e) => toEventOccurrence(lease.name, e.event, now, this.cursorAt(lease, e.seq + 1)));
    return answer(events, this.cursorAt(lease, end), end < lease.nextSeq, truncated);
  }

  private wait(lease: Lease, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        lease.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      lease.waiters.add(done);
    });
  }

  private cursorAt(lease: Lease, seq: number): string {
    return encodePollCursor({ boot: this.boot, lease: lease.gen, seq });
  }
}

function answer(events: EventOccurrence[], cursor: string, hasMore: boolean, truncated: boolean): PollResult {
  return { events, cursor, hasMore, nextPollMs: L.nextPollMs, truncated };
}

/** Drops what is past retention: beyond the newest {@link L.pollBufferEvents}, or older than {@link L.pollBufferMs}. */
function trim(lease: Lease, now: number): void {
  let drop = Math.max(0, lease.entries.length - L.pollBufferEvents);
  while (drop < lease.entries.length && lease.entries[drop]!.at <= now - L.pollBufferMs) drop++;
  if (drop === 0) return;
  for (const e of lease.entries.splice(0, drop)) lease.ids.delete(e.event.id);
}

function wake(lease: Lease): void {
  for (const w of [...lease.waiters]) w();
}
