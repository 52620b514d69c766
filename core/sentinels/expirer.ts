/**
 * Ending sentinels: expiry once per sentinel (stored, announced, the provider's watch cancelled,
 * the target told), expiry sweeps (startup, tick, poll), lazy expiry when the active sentinels
 * are listed or a dispatch asks, and ends by a provider's terminal subject.
 */
import { SvcError, toSvcError } from "../errors.js";
import type { SentinelView } from "../plugin-api/context.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import type { Clock } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import type { SentinelLedgers } from "./ledgers.js";
import { endsOn, expiryReason, type EndReason, type ExpiryPoint } from "./expiry.js";
import type { SentinelHooks } from "./hooks.js";
import type { SentinelIndexes } from "./indexes.js";
import type { KeyedMutex } from "./keyed-mutex.js";
import type { SentinelRecord } from "./service.js";
import type { SentinelRecordStore } from "./record-store.js";

export class SentinelExpirer {
  /** Expiries in progress, by sentinel id. */
  private readonly ending = new Map<string, Promise<boolean>>();

  constructor(
    private readonly store: SentinelRecordStore,
    private readonly ledgers: SentinelLedgers,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly events: DaemonEventBus,
    private readonly indexes: SentinelIndexes,
    private readonly hooks: SentinelHooks,
    private readonly mutex: KeyedMutex,
  ) {}

  /** Whether the sentinel's expiry is in progress. */
  isEnding(id: string): boolean {
    return this.ending.has(id);
  }

  /** Expires every active sentinel whose `until` is reached; returns the ids it ended. */
  async sweep(via: ExpiryPoint): Promise<string[]> {
    const ended: string[] = [];
    for (const rec of this.store.all()) {
      if (rec.status !== "active") continue;
      await this.loadCount(rec);
      const reason = expiryReason(rec, this.clock.now(), this.ledgers.delivered(rec.id));
      if (reason && (await this.expire(rec.id, reason, via))) ended.push(rec.id);
    }
    return ended;
  }

  /** Ends, under their mutex, the active sentinels of `provider` that end on `subject`. */
  async subjectTerminal(provider: string, subject: string): Promise<void> {
    for (const rec of this.store.all()) {
      if (rec.status !== "active" || rec.spec.provider !== provider || !endsOn(rec, [subject])) continue;
      await this.mutex.run(rec.id, () => this.expire(rec.id, "subject_terminal", "terminal"));
    }
  }

  /** The active sentinels (optionally of one provider); those found past their `until` are expired instead. */
  active(provider?: string): SentinelView[] {
    const now = this.clock.now();
    const out: SentinelView[] = [];
    for (const rec of this.store.all()) {
      if (rec.status !== "active" || (provider && rec.spec.provider !== provider) || this.ending.has(rec.id)) continue;
      const reason = expiryReason(rec, now, Math.max(rec.deliveredCount, this.ledgers.delivered(rec.id)));
      if (reason) this.expire(rec.id, reason, "poll").catch(() => undefined);
      else out.push(rec);
    }
    return out;
  }

  async isExpiredNow(sentinelId: string): Promise<boolean> {
    const rec = this.store.get(sentinelId);
    if (!rec || rec.status === "expired" || this.ending.has(sentinelId)) return true;
    await this.loadCount(rec);
    const reason = expiryReason(rec, this.clock.now(), this.ledgers.delivered(sentinelId));
    if (!reason) return false;
    await this.expire(sentinelId, reason, "dispatch");
    return true;
  }

  /** Loads the sentinel's dedup file when its `until` needs the delivered count (`count`), only then. */
  private async loadCount(rec: SentinelRecord): Promise<void> {
    if (rec.spec.until.kind === "count") await this.ledgers.load(rec.id);
  }

  /** Why the sentinel should end now, counting `pending` deliveries not yet durable as done. */
  reasonNow(id: string, pending = 0): EndReason | undefined {
    const rec = this.store.get(id);
    return rec ? expiryReason(rec, this.clock.now(), this.ledgers.delivered(id) + pending) : undefined;
  }

  /** Marks a sentinel expired (once), cancels its provider-side watch and tells its target. */
  expire(id: string, reason: EndReason, via: ExpiryPoint): Promise<boolean> {
    const current = this.store.get(id);
    if (current?.status !== "active" || this.ending.has(id)) return Promise.resolve(false);
    const p = this.doExpire(current, reason, via).finally(() => this.ending.delete(id));
    this.ending.set(id, p);
    return p;
  }

  private async doExpire(current: SentinelRecord, reason: EndReason, via: ExpiryPoint): Promise<boolean> {
    const id = current.id;
    const now = this.clock.now();
    await this.ledgers.load(id);
    let rec: SentinelRecord;
    // In a shared store another daemon may have ended it first: it announced it and told the target.
    let endedElsewhere = false;
    try {
      rec = await this.store.update(id, (r) => {
        endedElsewhere = r.status !== "active";
        return endedElsewhere
          ? r
          : {
              ...r,
              status: "expired",
              updatedAt: now,
              endedAt: now,
              endedReason: reason,
              deliveredCount: Math.max(r.deliveredCount, this.ledgers.delivered(id)),
            };
      });
    } catch (err) {
      if (SvcError.is(err) && err.code === "not_found") return false;
      this.logger.error("sentinel expiry could not be stored", {
        sentinel: id,
        reason,
        via,
        error: toSvcError(err).message,
      });
      throw err;
    }
    if (endedElsewhere) {
      // Its target was told there; here it only stops being matched and watched.
      this.indexes.remove(current);
      await this.hooks.provider(rec, "unwatch");
      return false;
    }
    // Only once stored: a failed write leaves it indexed, so the next event it matches retries the
    // expiry (meanwhile isEnding makes a delivery report it expired).
    this.indexes.remove(current);
    this.logger.info("sentinel ended:expired", { sentinel: id, reason, via });
    this.events.emit("sentinel:ended", { sentinelId: id, status: "expired", reason, via });
    await this.hooks.provider(rec, "unwatch");
    await this.hooks.target(rec, "expired");
    return true;
  }

  /** Resolves once every expiry in progress has finished. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.ending.values()]);
  }
}
