/**
 * What the webhook target's parts (target.ts, the dispatcher, replay, resume, the callback check,
 * endpoint health) ask of an outbox, whichever store keeps it: the file {@link Outbox} (the
 * default, answering from memory) or the team store's outbox (team/team-outbox.ts, answering from
 * PostgreSQL). Reads may answer synchronously or with a promise: callers `await` them (or use
 * {@link settle} on a hot path), so the file outbox keeps its synchronous answers.
 */
import type { SvcError } from "../../../core/plugin-api/index.js";
import type { AddResult } from "./outbox.js";
import type { DeadReason, DeliveryState, OutboxRow, RowStatus } from "./row.js";

export type MaybePromise<T> = T | Promise<T>;

/** What {@link OutboxPort.add} answers: no `row` when a team store refused it (`limit`) or knew the event only from its trace. */
export type PortAddResult = Omit<AddResult, "row"> & { row?: OutboxRow };

export interface OutboxPort {
  /**
   * Adds the row for an event (durable when it resolves), or returns the existing one: a
   * duplicate never creates a second row (`created: false`). In team mode the row and its
   * delivery job commit in one transaction; `limit` (a sentinel's `until: count`) refuses a row
   * beyond that many accepted events with `created: false` and no row.
   */
  add(input: { sentinelId: string; eventId: string; body: Buffer; limit?: number }): Promise<PortAddResult>;
  get(requestId: string): MaybePromise<OutboxRow | undefined>;
  rowsOf(sentinelId: string): MaybePromise<OutboxRow[]>;
  pending(): MaybePromise<OutboxRow[]>;
  counts(sentinelIds: ReadonlySet<string>): MaybePromise<{ pending: number; dead: number }>;
  delivered(): MaybePromise<OutboxRow[]>;
  unseenTerminal(): MaybePromise<OutboxRow[]>;
  hasEvent(sentinelId: string, eventId: string): MaybePromise<boolean>;
  accepted(sentinelId: string): MaybePromise<number>;
  /** The refusal `add` would give now (a full outbox), checked before a body is built. */
  refusal(sentinelId: string, eventId: string, options?: { batch?: boolean }): SvcError | undefined;
  knows(sentinelId: string, eventId: string): boolean;
  adopt(sentinelId: string, eventIds: string[], accepted: number): Promise<void>;
  forget(sentinelId: string): Promise<void>;
  readBody(row: OutboxRow): Promise<Buffer>;
  update(
    requestId: string,
    next: { status: RowStatus; deliveryState: DeliveryState; deadReason?: DeadReason },
    options?: { seen?: boolean; lazy?: boolean },
  ): Promise<boolean>;
  replay(requestIds: readonly string[]): Promise<OutboxRow[]>;
  restartAttempts(requestIds: readonly string[]): Promise<void>;
  kill(requestId: string, reason: DeadReason, lastError?: string): Promise<boolean>;
  killSentinel(sentinelId: string, reason: DeadReason): Promise<OutboxRow[]>;
  markSeen(...requestIds: string[]): Promise<void>;
  reap(): Promise<OutboxRow[]>;
  close(): Promise<void>;
}

/** Awaits only a promise: a synchronous answer stays synchronous-cost on a hot path. */
export function settle<T>(value: MaybePromise<T>, then: (v: T) => void): void | Promise<void> {
  if (value instanceof Promise) return value.then(then);
  then(value);
}
