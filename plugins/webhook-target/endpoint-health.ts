/**
 * Endpoint health of webhook sentinels: a callback that keeps failing is paused, not retried
 * forever. When {@link LIMITS.suspendAfterFailedRows} of a sentinel's rows in a row die after
 * their last attempt failed (5 attempts, or a timeout/5xx/... on the fifth), with no delivery
 * success between, its delivery is suspended: stored in its target (`suspended`, so it survives
 * a restart), shown as `deliveryStatus` in every projection, announced as the daemon event
 * `sentinel:delivery-suspended`. While suspended the dispatcher sends nothing for it; its rows
 * stay pending. A row ended by a 410 or 413 (the receiver refusing that one event) neither
 * counts nor breaks the run. The run is counted in memory: a restart starts it afresh.
 */
import type { Clock, DaemonEventSink, Logger, SentinelIngress } from "../../core/plugin-api/index.js";
import type { DeliveryFailure } from "./failure-category.js";
import { LIMITS } from "./limits.js";
import type { OutboxRow } from "./outbox/row.js";
import { asStoredTarget, type StoredWebhookTarget, type Suspension } from "./stored-target.js";

/**
 * `deliveryStatus` of a webhook sentinel (the MCP events sketch's "Webhook Delivery Status"):
 * `active: false` while suspended, with `reason` and `since`; `lastDeliveryAt` the last 2xx
 * (when known: kept from the outbox's delivered rows, 24 hours); `lastError` the category of
 * the last failed attempt since then, `null` after a success. Times are ISO-8601.
 */
export interface DeliveryStatus {
  active: boolean;
  reason?: Suspension["reason"];
  since?: string;
  lastDeliveryAt?: string;
  lastError: DeliveryFailure | null;
}

export interface EndpointHealthDeps {
  sentinels: () => SentinelIngress;
  /** The daemon's event stream, when the host offers one. */
  events: () => DaemonEventSink | undefined;
  clock: Clock;
  logger: Logger;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class EndpointHealth {
  /** Rows in a row that died after a failed last attempt, per sentinel. */
  private readonly failedRows = new Map<string, number>();
  private readonly lastDeliveryAt = new Map<string, number>();
  private readonly lastError = new Map<string, DeliveryFailure>();
  private readonly suspending = new Map<string, Promise<void>>();

  constructor(private readonly d: EndpointHealthDeps) {}

  /** Learns the last delivery times from the outbox's delivered rows (at open). */
  seed(rows: readonly OutboxRow[]): void {
    for (const r of rows)
      if (r.status === "delivered")
        this.lastDeliveryAt.set(r.sentinelId, Math.max(r.updatedAt, this.lastDeliveryAt.get(r.sentinelId) ?? 0));
  }

  /** A 2xx: the run of failures ends. */
  delivered(sentinelId: string, at: number): void {
    this.failedRows.delete(sentinelId);
    this.lastError.delete(sentinelId);
    this.lastDeliveryAt.set(sentinelId, at);
  }

  /** An attempt failed (the row may still be retried). */
  attemptFailed(sentinelId: string, category: DeliveryFailure): void {
    this.lastError.set(sentinelId, category);
  }

  /** A row died after its last attempt failed; the sentinel is suspended when the run reaches the limit. */
  async rowFailed(sentinelId: string, category: DeliveryFailure): Promise<void> {
    const run = (this.failedRows.get(sentinelId) ?? 0) + 1;
    this.failedRows.set(sentinelId, run);
    if (run >= LIMITS.suspendAfterFailedRows) await this.suspend(sentinelId, category);
  }

  isSuspended(sentinelId: string): boolean {
    return asStoredTarget(this.d.sentinels().get(sentinelId)?.spec.target)?.suspended !== undefined;
  }

  status(sentinelId: string | undefined, stored: StoredWebhookTarget): DeliveryStatus {
    const last = sentinelId === undefined ? undefined : this.lastDeliveryAt.get(sentinelId);
    const lastDeliveryAt = last === undefined ? {} : { lastDeliveryAt: iso(last) };
    const s = stored.suspended;
    if (s) return { active: false, reason: s.reason, since: iso(s.since), ...lastDeliveryAt, lastError: s.lastError };
    return {
      active: true,
      ...lastDeliveryAt,
      lastError: (sentinelId === undefined ? undefined : this.lastError.get(sentinelId)) ?? null,
    };
  }

  /**
   * Clears a stored suspension (a resume or a refresh); returns it, or `undefined` when delivery
   * was not suspended (then nothing is written).
   */
  async clear(sentinelId: string): Promise<Suspension | undefined> {
    await this.suspending.get(sentinelId);
    if (!this.isSuspended(sentinelId)) return undefined;
    let was: Suspension | undefined;
    await this.d.sentinels().updateStoredTarget(sentinelId, (cur) => {
      const { suspended, ...rest } = cur;
      was = asStoredTarget(cur)?.suspended;
      return suspended === undefined ? cur : rest;
    });
    this.failedRows.delete(sentinelId);
    return was;
  }

  /** The sentinel was removed. */
  forget(sentinelId: string): void {
    this.failedRows.delete(sentinelId);
    this.lastError.delete(sentinelId);
    this.lastDeliveryAt.delete(sentinelId);
  }

  /** Stores the suspension (once, however many rows fail together) and announces it. */
  private suspend(sentinelId: string, category: DeliveryFailure): Promise<void> {
    const inflight = this.suspending.get(sentinelId);
    if (inflight) return inflight;
    const run = this.store(sentinelId, category).finally(() => this.suspending.delete(sentinelId));
    this.suspending.set(sentinelId, run);
    return run;
  }

  private async store(sentinelId: string, category: DeliveryFailure): Promise<void> {
    const { logger, clock } = this.d;
    const since = clock.now();
    let suspension: Suspension | undefined;
    let stored: StoredWebhookTarget | undefined;
    try {
      await this.d.sentinels().updateStoredTarget(sentinelId, (cur) => {
        stored = asStoredTarget(cur);
        if (!stored || stored.suspended) return cur;
        suspension = { since, reason: "consecutive_failures", lastError: category };
        return { ...cur, suspended: suspension };
      });
    } catch (err) {
      // A sentinel removed meanwhile has nothing left to suspend.
      logger.warn("could not suspend a failing webhook sentinel's delivery", {
        sentinelId,
        error: (err as Error).message,
      });
      return;
    }
    if (!suspension) return;
    const subscriptionId = stored?.mcp?.subscriptionId;
    logger.warn(
      "webhook delivery suspended: the callback keeps failing; resume with svc sentinel resume, a refresh, or a successful svc webhooks check",
      {
        sentinelId,
        failedRows: this.failedRows.get(sentinelId),
        lastError: category,
      },
    );
    this.d.events()?.emit("sentinel:delivery-suspended", {
      sentinelId,
      ...(subscriptionId ? { subscriptionId } : {}),
      reason: suspension.reason,
      since: iso(since),
    });
  }
}
