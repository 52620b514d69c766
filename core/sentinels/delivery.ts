/**
 * Delivery of one sentinel's matched events to its target: in order, runs of them through the
 * target's `deliverMany` when it has one, dedup appends (deferred acks included) overlapping the
 * next run, and the `until`, expiry and terminal-subject decisions taken between runs.
 */
import { toSvcError } from "../errors.js";
import type { IngestResult } from "../plugin-api/context.js";
import type { SvcEvent } from "../plugin-api/events.js";
import type { TargetAck, TargetInstance } from "../plugin-api/target.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import type { Logger } from "../runtime/logger.js";
import type { SentinelLedgers } from "./ledgers.js";
import type { SentinelExpirer } from "./expirer.js";
import { endsOn } from "./expiry.js";
import type { SentinelPlugins } from "./plugin-access.js";
import type { SentinelRecord } from "./service.js";
import type { SentinelRecordStore } from "./record-store.js";

export type Matched = IngestResult["matched"];

/** Events of one sentinel handed to a target's `deliverMany` at once at most. */
const MAX_RUN = 64;

export class SentinelDelivery {
  constructor(
    private readonly store: SentinelRecordStore,
    private readonly ledgers: SentinelLedgers,
    private readonly plugins: SentinelPlugins,
    private readonly logger: Logger,
    private readonly events: DaemonEventBus,
    private readonly expirer: SentinelExpirer,
  ) {}

  /**
   * Delivers one sentinel's matched events in order; runs under the sentinel's mutex. The target
   * accepts events in order, a run of them at once when it can ({@link batchFrom}), and the dedup
   * appends of one run overlap the target's acceptance of the next: an outcome is final once its
   * append is durable, a repeated id waits for the earlier append, and `until` and expiry
   * decisions wait for the appends they count. Returns once every append is settled.
   */
  async deliverAll(id: string, events: SvcEvent[], terminal: Map<SvcEvent, string[]>, out: Matched): Promise<void> {
    await this.ledgers.load(id);
    const unsettled = new Map<string, Promise<void>>();
    const settle = async () => {
      await Promise.all(unsettled.values());
      unsettled.clear();
    };
    // A reason counting the deliveries not yet durable holds only once they are (one may fail).
    const reason = async () => {
      const r = this.expirer.reasonNow(id, unsettled.size);
      if (!r || unsettled.size === 0) return r;
      await settle();
      return this.expirer.reasonNow(id);
    };
    // The target plugin, looked up once (at the first event to hand over) for every run.
    let target: Promise<TargetInstance> | undefined;
    const targetOf = (rec: SentinelRecord) => {
      if (!target) {
        target = this.plugins.target(rec.spec.target.kind);
        target.catch(() => undefined); // a failed lookup fails each run's deliveries, in deliverRun
      }
      return target;
    };
    try {
      const ingressReason = this.expirer.reasonNow(id);
      if (ingressReason) await this.expirer.expire(id, ingressReason, "ingress");
      for (let i = 0; i < events.length; i++) {
        let event = events[i]!;
        const rec = this.store.get(id);
        if (rec?.status !== "active" || this.expirer.isEnding(id)) {
          out.push({ sentinelId: id, eventId: event.id, outcome: "expired" });
          continue;
        }
        if (unsettled.has(event.id)) await settle();
        if (this.ledgers.has(id, event.id)) {
          out.push({ sentinelId: id, eventId: event.id, outcome: "duplicate" });
        } else {
          const before = await reason();
          if (before) {
            await this.expirer.expire(id, before, "dispatch");
            out.push({ sentinelId: id, eventId: event.id, outcome: "expired" });
            continue;
          }
          const instance = await targetOf(rec).catch(() => undefined);
          const run = instance?.deliverMany ? this.batchFrom(rec, events, i, terminal, unsettled) : [event];
          for (const [eventId, durable] of await this.deliverRun(rec, targetOf(rec), run, out))
            unsettled.set(eventId, durable);
          i += run.length - 1;
          event = events[i]!;
          const after = await reason();
          if (after) await this.expirer.expire(id, after, "dispatch");
        }
        const subjects = terminal.get(event);
        if (subjects && endsOn(rec, subjects)) {
          await settle();
          await this.expirer.expire(id, "subject_terminal", "terminal");
        }
      }
    } finally {
      await settle();
    }
  }

  /**
   * The run of events from `start` that may be handed to the target together: new ids only (not
   * seen, in flight, unsettled or repeated in the run), no more than an `until: count` still
   * allows counting the unsettled deliveries, and ending at an event that ends the sentinel.
   */
  private batchFrom(
    rec: SentinelRecord,
    events: SvcEvent[],
    start: number,
    terminal: Map<SvcEvent, string[]>,
    unsettled: Map<string, unknown>,
  ): SvcEvent[] {
    const until = rec.spec.until;
    const room = until.kind === "count" ? until.n - this.ledgers.delivered(rec.id) - unsettled.size : MAX_RUN;
    const run = [events[start]!];
    const ids = new Set([events[start]!.id]);
    for (let j = start + 1; j < events.length && run.length < Math.min(room, MAX_RUN); j++) {
      const subjects = terminal.get(events[j - 1]!);
      if (subjects && endsOn(rec, subjects)) break;
      const next = events[j]!;
      if (ids.has(next.id) || unsettled.has(next.id) || this.ledgers.has(rec.id, next.id)) break;
      run.push(next);
      ids.add(next.id);
    }
    return run;
  }

  /**
   * Hands a run of events to the target (`deliverMany` for more than one) and pushes their
   * outcomes to `out`, in order. Returns, for each accepted event, its dedup append in progress
   * (never rejecting), which settles the outcome; wrapped, so that awaiting the acceptance does
   * not await the appends.
   */
  private async deliverRun(
    rec: SentinelRecord,
    targetInstance: Promise<TargetInstance>,
    run: SvcEvent[],
    out: Matched,
  ): Promise<Array<[string, Promise<void>]>> {
    const results = run.map((event) => {
      const result: Matched[number] = { sentinelId: rec.id, eventId: event.id, outcome: "delivered" };
      out.push(result);
      return result;
    });
    const failed = (i: number) => (err: unknown) => {
      const e = toSvcError(err);
      this.logger.warn("sentinel delivery failed", {
        sentinel: rec.id,
        event: run[i]!.id,
        code: e.code,
        error: e.message,
      });
      results[i]!.outcome = "failed";
      results[i]!.error = e.message;
    };
    let acks: Array<PromiseSettledResult<TargetAck>>;
    try {
      const target = await targetInstance;
      const deliveries = run.map((event) => ({ sentinel: rec, event }));
      acks =
        target.deliverMany && run.length > 1
          ? await target.deliverMany(deliveries)
          : [{ status: "fulfilled", value: await target.deliver(deliveries[0]!) }];
    } catch (err) {
      run.forEach((_, i) => failed(i)(err));
      return [];
    }
    const durables: Array<[string, Promise<void>]> = [];
    run.forEach((event, i) => {
      const settled = acks[i];
      if (settled?.status !== "fulfilled")
        return failed(i)(settled ? settled.reason : new Error("the target gave no answer for this event"));
      // The target's own ledger already held the event (another daemon of the team accepted it a
      // moment ago): a duplicate, nothing counted, recorded or announced.
      if (settled.value.ack === "duplicate") {
        results[i]!.outcome = "duplicate";
        return;
      }
      const ack = settled.value.ack === "deferred" ? "deferred" : "now";
      const durable = this.ledgers.recordDelivery(rec.id, event.id, ack).then(() => {
        this.logger.debug("sentinel matched", { sentinel: rec.id, event: event.id, type: event.type });
        this.events.emit("sentinel:matched", {
          sentinelId: rec.id,
          eventId: event.id,
          type: event.type,
          subjects: event.subjects,
          provider: rec.spec.provider,
          target: rec.spec.target.kind,
        });
      }, failed(i));
      durables.push([event.id, durable]);
    });
    return durables;
  }
}
