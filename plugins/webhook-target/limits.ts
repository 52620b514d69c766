import { EGRESS_MAX_BODY_BYTES } from "../../core/plugin-api/index.js";

/** Every number of SPEC.md "Limits" and "Delivery rules" that the webhook target enforces. */
export const LIMITS = {
  /**
   * A serialized envelope over this many bytes has its `data` replaced and `truncated: true`: the
   * egress's own request limit, so every envelope built can be sent.
   */
  maxBodyBytes: EGRESS_MAX_BODY_BYTES,
  /** Delivery attempts per outbox row. */
  maxAttempts: 5,
  /** Waits before attempts 2 to 5 (exponential from 250 ms, capped at 4 s). */
  retryWaitsMs: [500, 1_000, 2_000, 4_000] as readonly number[],
  /** Timeout of one delivery attempt. */
  attemptTimeoutMs: 15_000,
  /** Both the current and the previous secret sign for this long after `rotatedAt`. */
  rotationWindowMs: 10 * 60_000,
  /** Rows in the outbox; the oldest terminal rows are evicted first, pending rows never. */
  outboxCap: 2_000,
  /** Delivered rows are removed this long after delivery. */
  deliveredRetentionMs: 24 * 3_600_000,
  /** Pending rows older than this become dead (`age_out`). */
  pendingMaxAgeMs: 7 * 24 * 3_600_000,
  /**
   * Endpoint health: a sentinel's delivery is suspended when this many of its rows in a row died
   * after their last attempt failed, with no delivery success between (see endpoint-health.ts).
   */
  suspendAfterFailedRows: 5,
  /**
   * Pending rows a suspended sentinel may hold: a quarter of the outbox cap, so one failing
   * callback cannot fill the outbox every webhook sentinel shares. A match beyond it is stored
   * `dead` (`suspended_backlog`), its exact bytes kept for `svc sentinel replay`.
   */
  suspendedBacklogMax: 500,
} as const;

/** The wait before the next attempt of a row that has had `attempts` attempts (SPEC.md "Delivery rules"). */
export const retryWaitMs = (attempts: number): number =>
  LIMITS.retryWaitsMs[attempts - 1] ?? LIMITS.retryWaitsMs.at(-1)!;
