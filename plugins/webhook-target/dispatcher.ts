import { setMaxListeners } from "node:events";
import {
  SvcError,
  hostOf,
  type Clock,
  type Logger,
  type SentinelIngress,
  type Sleep,
} from "../../core/plugin-api/index.js";
import type { Egress } from "../../core/plugin-api/index.js";
import { attemptDelivery, type AttemptOutcome } from "./attempt.js";
import type { EndpointHealth } from "./endpoint-health.js";
import { LIMITS, retryWaitMs } from "./limits.js";
import type { OutboxPort } from "./outbox/port.js";
import type { DeadReason, OutboxRow } from "./outbox/row.js";
import { Semaphore } from "./semaphore.js";
import { signingKeys } from "./signing-keys.js";
import { asStoredTarget, subscriptionIdOf, type StoredWebhookTarget } from "./stored-target.js";
import type { VaultPort } from "./vault-port.js";

export interface DispatcherOptions {
  outbox: OutboxPort;
  vault: VaultPort;
  egress: Pick<Egress, "post">;
  sentinels: () => SentinelIngress;
  /** Records each outcome; a suspended sentinel's rows are not attempted. */
  health: EndpointHealth;
  clock: Clock;
  sleep: Sleep;
  logger: Logger;
  /** Per-attempt timeout (default 15 s; tests inject a short one). */
  attemptTimeoutMs?: number;
}

/** Attempts in flight to one callback host. */
const PER_CALLBACK = 16;
/** Attempts in flight overall (also the team job queue's concurrency for deliveries). */
export const MAX_IN_FLIGHT = 256;

/**
 * Delivers outbox rows: up to 5 attempts per row with waits of 500 ms, 1 s, 2 s, 4 s, each attempt
 * re-signed with a fresh timestamp over the same stored bytes and recorded in the row. Each
 * callback host has its own concurrency lane, and a row waiting between attempts holds no slot,
 * so a slow or failing callback never stalls deliveries to the others. Nothing is attempted for a
 * sentinel whose delivery endpoint health suspended: its rows stay pending (the job ends; a
 * resume enqueues them again).
 */
export class Dispatcher {
  private readonly jobs = new Map<string, Promise<void>>();
  private readonly lanes = new Map<string, Semaphore>();
  private readonly global: Semaphore;
  private readonly stopping = new AbortController();

  constructor(private readonly o: DispatcherOptions) {
    this.global = new Semaphore(MAX_IN_FLIGHT);
    // Every row waiting between attempts listens for shutdown on this one signal.
    setMaxListeners(0, this.stopping.signal);
  }

  /** Starts delivering a row unless it is already being delivered. */
  enqueue(requestId: string): void {
    if (this.jobs.has(requestId) || this.stopping.signal.aborted) return;
    const job = this.run(requestId)
      .catch((err: Error) => this.o.logger.error("webhook delivery job failed", { requestId, error: err.message }))
      .finally(() => this.jobs.delete(requestId));
    this.jobs.set(requestId, job);
  }

  /** Resolves once every started delivery has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.jobs.size > 0) await Promise.all([...this.jobs.values()]);
  }

  /** Stops starting attempts and waits (at most `graceMs`) for attempts in flight. */
  async stop(graceMs = 2_000): Promise<void> {
    this.stopping.abort(new Error("the webhook dispatcher is stopping"));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
  }

  /** Tells the engine about a terminal row (markSeen), then records that it did. */
  async acknowledge(row: OutboxRow): Promise<void> {
    try {
      await this.o.sentinels().markSeen(row.sentinelId, row.eventId);
      await this.o.outbox.markSeen(row.requestId);
    } catch (err) {
      this.couldNotAcknowledge(row, err);
    }
  }

  /**
   * Tells the engine a row's event was delivered before the row records it, so that both land in
   * one durable append (marking seen is idempotent: should the delivery's record be lost to a
   * crash, the row is delivered again and acknowledged again). False when the engine could not be
   * told: the row is then acknowledged later, as {@link acknowledge} does.
   */
  private async tellEngineDelivered(row: OutboxRow): Promise<boolean> {
    try {
      await this.o.sentinels().markSeen(row.sentinelId, row.eventId);
      return true;
    } catch (err) {
      this.couldNotAcknowledge(row, err);
      return false;
    }
  }

  private couldNotAcknowledge(row: OutboxRow, err: unknown): void {
    this.o.logger.warn("could not mark a delivered event seen; retried later", {
      sentinelId: row.sentinelId,
      eventId: row.eventId,
      error: (err as Error).message,
    });
  }

  /**
   * One attempt of a row, as a team job runs it (team mode: the job queue holds the retries; a
   * retry's job is added with the attempt's record). Nothing for a row gone, terminal or of a
   * suspended sentinel. Throws when the dispatcher stops before the attempt: the job runs again later.
   */
  async deliverOnce(requestId: string): Promise<void> {
    const attempt = this.stepThroughOutage(requestId);
    // Counted among the deliveries in progress: stop() and idle() wait for it.
    const settled = attempt.then(
      () => undefined,
      () => undefined,
    );
    this.jobs.set(requestId, settled);
    const after = await attempt.finally(() => {
      if (this.jobs.get(requestId) === settled) this.jobs.delete(requestId);
    });
    if (after === "stopped") throw new Error("the webhook dispatcher is stopping; the delivery runs again later");
  }

  /**
   * {@link step}, again while the store does not answer (PostgreSQL restarting): the job stays
   * with this daemon and runs as soon as the store is back, instead of failing into the queue's
   * exponential backoff (minutes after a few failures). Not a delivery attempt: nothing is counted.
   */
  private async stepThroughOutage(requestId: string): Promise<OutboxRow | "stopped" | undefined> {
    for (let wait = 250; ; wait = Math.min(wait * 2, 5_000)) {
      try {
        return await this.step(requestId);
      } catch (err) {
        if (!SvcError.is(err) || err.code !== "store_unreachable" || this.stopping.signal.aborted) throw err;
      }
      try {
        await this.o.sleep(wait, this.stopping.signal);
      } catch {
        return "stopped";
      }
    }
  }

  private async run(requestId: string): Promise<void> {
    for (;;) {
      if (this.stopping.signal.aborted) return;
      const after = await this.step(requestId);
      if (after === undefined || after === "stopped" || after.status !== "pending") return;
      try {
        await this.o.sleep(retryWaitMs(after.deliveryState.attempts), this.stopping.signal);
      } catch {
        return;
      }
    }
  }

  /**
   * Attempts a pending row once and acknowledges it when that made it terminal. Returns the row
   * after the attempt; undefined when there was nothing to attempt; `stopped` when nothing was sent.
   */
  private async step(requestId: string): Promise<OutboxRow | "stopped" | undefined> {
    const { outbox } = this.o;
    if (this.stopping.signal.aborted) return "stopped";
    const row = await outbox.get(requestId);
    if (row?.status !== "pending" || this.o.health.isSuspended(row.sentinelId)) return undefined;
    if ((await this.attemptOnce(row)) === "stopped") return this.stopping.signal.aborted ? "stopped" : undefined;
    const after = await outbox.get(requestId);
    if (after && after.status !== "pending" && !after.seen) await this.acknowledge(after);
    return after;
  }

  /**
   * One pass, holding a slot of the callback's lane (so only attempts in flight query the engine
   * or hold a body in memory): expiry check, keys, the stored body, the POST; then the outcome is
   * recorded.
   */
  /** `stopped`: nothing was sent or recorded (the dispatcher stops, or the sentinel was suspended). */
  private async attemptOnce(row: OutboxRow): Promise<"recorded" | "stopped"> {
    const { outbox, clock } = this.o;
    // The lane is chosen from the URL, which a rotation never changes; the secrets are read only
    // once the slot is held (a rotation while waiting must sign with both secrets).
    const url = this.targetOf(row.sentinelId)?.url;
    if (url === undefined) {
      await outbox.kill(row.requestId, "sentinel_removed", "the sentinel was removed");
      return "recorded";
    }
    const host = hostOf(url);
    const release = await this.slot(host);
    let outcome: AttemptOutcome;
    try {
      if (this.stopping.signal.aborted) return "stopped";
      const now = await this.targetAtDispatch(row);
      if (!now.ok) {
        await outbox.kill(row.requestId, now.reason, now.error);
        return "recorded";
      }
      const target = now.target;
      // Suspended while this attempt waited for its slot: the row stays pending, nothing is sent.
      if (target.suspended) return "stopped";
      const keys = await signingKeys(target, this.o.vault, clock.now());
      if (!keys.ok) {
        await outbox.kill(row.requestId, keys.reason, keys.error);
        return "recorded";
      }
      let body: Buffer;
      try {
        body = await outbox.readBody(row);
      } catch (err) {
        // The store not answering (team mode: PostgreSQL down or its pool exhausted) is no verdict
        // on the body: the job fails and runs again. Only a body gone or damaged ends the row.
        if (SvcError.is(err) && err.code === "store_unreachable") throw err;
        await outbox.kill(row.requestId, "delivered_rejected", (err as Error).message);
        return "recorded";
      }
      outcome = await attemptDelivery(this.o.egress, {
        url: target.url,
        subscriptionId: subscriptionIdOf(row.sentinelId, target),
        eventId: row.eventId,
        body,
        keys: keys.keys,
        timestamp: Math.floor(clock.now() / 1000),
        timeoutMs: this.o.attemptTimeoutMs ?? LIMITS.attemptTimeoutMs,
      });
    } finally {
      release();
    }
    const attempts = row.deliveryState.attempts + 1;
    const at = clock.now();
    if (outcome.kind === "delivered") {
      // Delivered: the failures before it are history, not a current error. The endpoint's health
      // says so at once (it is about the endpoint's answer, kept in memory); the row's record answers
      // no caller, so it rides with the journal's next write (lazy) with the engine's acknowledgement.
      this.o.health.delivered(row.sentinelId, at);
      const seen = await this.tellEngineDelivered(row);
      await outbox.update(
        row.requestId,
        { status: "delivered", deliveryState: { attempts, lastError: null, lastAt: at } },
        { seen, lazy: true },
      );
      this.o.logger.debug("webhook delivered", { sentinelId: row.sentinelId, eventId: row.eventId, host, attempts });
      return "recorded";
    }
    const deliveryState = { attempts, lastError: outcome.error, lastAt: at };
    const terminal = outcome.kind === "rejected" || attempts >= LIMITS.maxAttempts;
    const recorded = await outbox.update(
      row.requestId,
      terminal
        ? { status: "dead", deliveryState, deadReason: "delivered_rejected" }
        : { status: "pending", deliveryState },
    );
    this.o.health.attemptFailed(row.sentinelId, outcome.category);
    if (terminal)
      this.o.logger.warn("webhook delivery rejected", {
        sentinelId: row.sentinelId,
        eventId: row.eventId,
        host,
        attempts,
      });
    // A row whose retries ran out counts toward suspension; one the receiver refused (410, 413) does not.
    if (terminal && recorded && outcome.kind === "retry")
      await this.o.health.rowFailed(row.sentinelId, outcome.category);
    return "recorded";
  }

  /**
   * The stored target to deliver with now, from the sentinel's current record, or why the row
   * ends instead. Expiry at dispatch (SPEC.md): a removed sentinel ends the row as
   * `sentinel_removed`; an expired one as `sentinel_expired`, nothing sent. A sentinel that ended
   * because its `count` was reached or its subject went terminal still delivers the events it
   * accepted before ending.
   */
  private async targetAtDispatch(
    row: OutboxRow,
  ): Promise<{ ok: true; target: StoredWebhookTarget } | { ok: false; reason: DeadReason; error: string }> {
    const removed = { ok: false, reason: "sentinel_removed", error: "the sentinel was removed" } as const;
    const ingress = this.o.sentinels();
    if (!ingress.get(row.sentinelId)) return removed;
    const expired = await ingress.isExpiredNow(row.sentinelId);
    // Read after the await: the record as it is now (a rotation may have changed the secrets).
    const view = ingress.get(row.sentinelId);
    const target = asStoredTarget(view?.spec.target);
    if (!view || !target) return removed;
    const until = view.spec.until.kind;
    if (expired && until !== "count" && until !== "subject_terminal") {
      return { ok: false, reason: "sentinel_expired", error: "the sentinel expired before delivery; nothing was sent" };
    }
    return { ok: true, target };
  }

  private targetOf(sentinelId: string): StoredWebhookTarget | undefined {
    return asStoredTarget(this.o.sentinels().get(sentinelId)?.spec.target);
  }

  private async slot(host: string): Promise<() => void> {
    let lane = this.lanes.get(host);
    if (!lane) this.lanes.set(host, (lane = new Semaphore(PER_CALLBACK)));
    const releaseLane = await lane.acquire();
    const releaseGlobal = await this.global.acquire();
    return () => {
      releaseGlobal();
      releaseLane();
      if (!lane.busy) this.lanes.delete(host);
    };
  }
}
