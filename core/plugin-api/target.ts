import type { z } from "zod";
import type { PluginContext, SentinelView } from "./context.js";
import type { DoctorFinding, TargetCheckInput } from "./doctor.js";
import type { StoreTransfer } from "./team.js";
import type { SvcEvent } from "./events.js";

export interface TargetCreateMeta {
  sentinelId: string;
  /** Who asked (e.g. `token:boot`, `loopback`); part of the challenge cache key. */
  principal: string;
}

export interface TargetRefreshResult {
  /** The secret changed (verified, current, the previous one signs during the rotation window). */
  rotated: boolean;
  /** Delivery had been suspended and now resumes. */
  resumed: boolean;
}

export interface TargetResumeResult {
  /** False when delivery was not suspended (nothing changed). */
  resumed: boolean;
  /** Events waiting that are now being sent. */
  pending: number;
}

export interface TargetDelivery {
  sentinel: SentinelView;
  event: SvcEvent;
}

/**
 * - `now`: the event is handled; the engine marks it seen.
 * - `deferred`: the event is durably accepted (e.g. an outbox row is fsynced); the target calls
 *   `sentinels.markSeen` when its delivery reaches a terminal state.
 */
export interface TargetAck {
  /**
   * `duplicate`: the target's own ledger already held the event (in team mode another daemon may
   * have accepted it a moment ago): nothing was delivered or counted.
   */
  ack: "now" | "deferred" | "duplicate";
}

/**
 * A target's own durable record of the events it accepted (the webhook target's outbox rows).
 * A target that offers one is the only record of its sentinels' deliveries: the engine keeps no
 * dedup record of its own for them, asks {@link has} whether an event is a duplicate and
 * {@link accepted} for `deliveredCount` and `until: count`. An event the target's record lost
 * (damage) is therefore accepted again rather than answered `duplicate`.
 */
export interface TargetLedger {
  /** Loads the record (called before the other methods, possibly many times). */
  ready(): Promise<void>;
  /** True when an event of this sentinel with this id was accepted (kept for at least the last 1000 ids). */
  has(sentinelId: string, eventId: string): boolean;
  /** Events of this sentinel accepted so far. */
  accepted(sentinelId: string): number;
  /**
   * Takes over the engine's own record of a sentinel from before the target kept one: its last
   * event ids and its count of accepted events. Durable when it resolves; idempotent.
   */
  adopt(sentinelId: string, record: { eventIds: string[]; accepted: number }): Promise<void>;
}

/** A target's deliveries over all its sentinels (see {@link TargetInstance.deliveryCounts}). */
export interface DeliveryCounts {
  pending: number;
  dead: number;
}

/** A running target: consumes matched events. */
export interface TargetInstance {
  /** Validates the creation input of this kind (the `target` object of a SentinelSpec). */
  readonly inputSchema: z.ZodType;
  /**
   * Called once at creation, before anything is stored: verify, move secrets aside.
   * Returns the target as it is stored in the sentinel record. Throw an SvcError to refuse.
   */
  create(input: Record<string, unknown>, meta: TargetCreateMeta): Promise<Record<string, unknown>>;
  /**
   * The public projection of a stored target (listings, get views): never a secret. `meta` names
   * the sentinel, for what the target knows of it beyond the stored form (e.g. delivery health).
   */
  project(stored: Record<string, unknown>, meta?: { sentinelId: string }): Record<string, unknown>;
  /** Durably accepts a matched event. */
  deliver(delivery: TargetDelivery): Promise<TargetAck>;
  /**
   * Optional: durably accepts several matched events of one sentinel together (e.g. in one
   * fsync), in the given order, as {@link deliver} would one after another. The i-th result
   * answers the i-th delivery: each is accepted or refused on its own, and a result is fulfilled
   * only once that delivery is durable. The engine uses it when one ingest has more than one
   * event for a sentinel, and `deliver` otherwise.
   */
  deliverMany?(deliveries: TargetDelivery[]): Promise<Array<PromiseSettledResult<TargetAck>>>;
  /** Optional: the target's own record of accepted events (see {@link TargetLedger}). */
  readonly ledger?: TargetLedger;
  /** The sentinel was removed. */
  removed?(sentinel: SentinelView): Promise<void>;
  /** The sentinel expired. */
  expired?(sentinel: SentinelView): Promise<void>;
  /**
   * Optional: a repeat of {@link create} by the sentinel's owner (an MCP subscription's refresh):
   * e.g. a changed secret is verified and made current, and delivery suspended by endpoint health
   * resumes. Stores what it changes itself (`ctx.service("sentinels").updateStoredTarget`).
   */
  refresh?(
    sentinel: SentinelView,
    input: Record<string, unknown>,
    meta: TargetCreateMeta,
  ): Promise<TargetRefreshResult>;
  /** Optional: `svc sentinel resume`: delivery suspended by endpoint health resumes and what waits is sent. */
  resume?(sentinel: SentinelView): Promise<TargetResumeResult>;
  /** Extra status for `svc sentinel status` (e.g. outbox rows). */
  status?(sentinel: SentinelView): Promise<Record<string, unknown>>;
  /**
   * Optional: this target's deliveries for the given sentinels (those of its kind that exist), for
   * `svc status` (`GET /status`): how many wait (`pending`) and how many gave up (`dead`). One
   * cheap pass: it is asked on every status view, whatever the number of sentinels.
   */
  deliveryCounts?(sentinelIds: ReadonlySet<string>): Promise<DeliveryCounts>;
  /**
   * Optional: checks the target's own files under `$SVC_HOME` for `svc doctor`, offline (no daemon
   * need run; the target is set up but not started) and read-only: it never writes, moves or
   * truncates anything, unlike loading. Says what is wrong and what to do (see {@link DoctorFinding}).
   */
  check?(input: TargetCheckInput): Promise<DoctorFinding[]>;
  /** Optional: moves the target's own records between stores (`svc store migrate`, see ./team.ts). */
  readonly transfer?: StoreTransfer;
  start?(): Promise<void>;
  stop?(): Promise<void>;
}

export interface TargetPlugin {
  readonly type: "target";
  readonly kind: string;
  readonly description?: string;
  setup(ctx: PluginContext): TargetInstance | Promise<TargetInstance>;
}

/** Declares a target plugin. Default-export the result from the manifest's `entry`. */
export function defineTarget(def: Omit<TargetPlugin, "type">): TargetPlugin {
  return Object.freeze({ ...def, type: "target" as const });
}
