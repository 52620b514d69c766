/**
 * The sentinel engine: creation and removal through target plugins, the per-provider matcher
 * index, deduplication, `until` and expiry, and delivery to targets. It implements the
 * management API ({@link SentinelService}) and the plugin-facing ingress.
 */
import { inject, injectable } from "tsyringe";
import { SvcError, toSvcError } from "../errors.js";
import type { IngestResult, SentinelView } from "../plugin-api/context.js";
import type { SvcEvent } from "../plugin-api/events.js";
import type { TargetAck } from "../plugin-api/target.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import type { Clock, Random } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import { CLOCK, DAEMON_EVENTS, LOGGER, RANDOM } from "../tokens.js";
import { SENTINEL_DEDUP, SENTINEL_PLUGINS, SENTINEL_STORE } from "./tokens.js";
import type { SentinelDedup } from "./dedup.js";
import { expiryReason, type EndReason, type ExpiryPoint } from "./expiry.js";
import { KeyedMutex } from "./keyed-mutex.js";
import { projectSentinel } from "./projection.js";
import { SentinelIndex } from "./matcher.js";
import type { SentinelPlugins } from "./plugin-access.js";
import { defaultProvider, validateSpec } from "./validate.js";
import type { ProviderReport, SentinelProjection, SentinelRecord, SentinelService, SentinelStatus } from "./service.js";
import type { SentinelStore } from "./store.js";
import { svcEventSchema, parseOrThrow } from "./spec-schema.js";

type Matched = IngestResult["matched"];

/** Sentinels delivered to in parallel by one ingest (each sentinel's events stay in order). */
const DELIVERY_CONCURRENCY = 32;
/** Events of one sentinel handed to a target's `deliverMany` at once at most. */
const MAX_RUN = 64;

@injectable()
export class SentinelEngine implements SentinelService {
  private readonly indexes = new Map<string, SentinelIndex>();
  private readonly mutex = new KeyedMutex();
  /** Expiries in progress, by sentinel id. */
  private readonly ending = new Map<string, Promise<boolean>>();
  /** Sweeps and ingests in progress, awaited by {@link settled} (daemon stop). */
  private readonly inProgress = new Set<Promise<unknown>>();
  private readonly logger: Logger;

  constructor(
    @inject(SENTINEL_STORE as symbol) private readonly store: SentinelStore,
    @inject(SENTINEL_DEDUP as symbol) private readonly dedup: SentinelDedup,
    @inject(SENTINEL_PLUGINS as symbol) private readonly plugins: SentinelPlugins,
    @inject(CLOCK as symbol) private readonly clock: Clock,
    @inject(RANDOM as symbol) private readonly random: Random,
    @inject(LOGGER as symbol) logger: Logger,
    @inject(DAEMON_EVENTS as symbol) private readonly events: DaemonEventBus,
  ) {
    this.logger = logger.child({ area: "sentinels" });
  }

  /** Loads the store, indexes the active sentinels and drops orphan dedup files (then sweep "startup"). */
  async load(): Promise<void> {
    const records = await this.store.load();
    for (const rec of records) if (rec.status === "active") await this.indexRecord(rec);
    for (const id of await this.dedup.orphans(new Set(records.map((r) => r.id)))) await this.dedup.remove(id);
  }

  /** Expires every active sentinel whose `until` is reached (startup, periodic tick, poll). */
  sweep(via: ExpiryPoint): Promise<string[]> {
    return this.track(this.sweepNow(via));
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inProgress.add(p);
    void p.catch(() => undefined).finally(() => this.inProgress.delete(p));
    return p;
  }

  private async sweepNow(via: ExpiryPoint): Promise<string[]> {
    const ended: string[] = [];
    for (const rec of this.store.all()) {
      if (rec.status !== "active") continue;
      await this.dedup.load(rec.id);
      const reason = expiryReason(rec, this.clock.now(), this.dedup.delivered(rec.id));
      if (reason && (await this.expire(rec.id, reason, via))) ended.push(rec.id);
    }
    return ended;
  }

  async create(input: unknown, principal: string): Promise<SentinelProjection> {
    const { spec, target: targetInput } = await validateSpec(input, this.plugins, this.clock.now());
    const target = await this.plugins.target(spec.target.kind);
    const id = `snt_${this.random.ulid()}`;
    const stored = await target.create(targetInput, { sentinelId: id, principal });
    const now = this.clock.now();
    const rec: SentinelRecord = {
      id,
      status: "active",
      createdAt: now,
      updatedAt: now,
      deliveredCount: 0,
      spec: { ...spec, target: { ...stored, kind: spec.target.kind } },
    };
    try {
      await this.store.insert(rec);
    } catch (err) {
      await target.removed?.(rec).catch(() => undefined);
      throw err;
    }
    await this.indexRecord(rec);
    this.logger.info("sentinel created", { sentinel: id, provider: spec.provider, target: spec.target.kind });
    this.events.emit("sentinel:created", { sentinelId: id, provider: spec.provider, target: spec.target.kind });
    await this.callProvider(rec, "watch");
    return this.projectRecord(rec);
  }

  async list(): Promise<SentinelProjection[]> {
    const all = this.store.all().sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    return Promise.all(all.map((r) => this.projectRecord(r)));
  }

  get(id: string): SentinelView | undefined {
    return this.store.get(id);
  }

  async project(id: string): Promise<SentinelProjection> {
    return this.projectRecord(this.require(id));
  }

  async status(id: string): Promise<SentinelStatus> {
    const rec = this.require(id);
    const projection = await this.projectRecord(rec);
    const target = await this.plugins.target(rec.spec.target.kind).catch(() => undefined);
    const extra = await target?.status?.(rec);
    return extra ? { ...projection, target: extra } : projection;
  }

  async remove(id: string): Promise<void> {
    this.require(id);
    await this.mutex.run(id, async () => {
      const rec = this.require(id);
      this.indexes.get(rec.spec.provider ?? "")?.remove(id);
      if (rec.status === "active") await this.callProvider(rec, "unwatch");
      const target = await this.plugins.target(rec.spec.target.kind).catch(() => undefined);
      await target?.removed?.(rec).catch((err: Error) => this.logger.warn("target removal hook failed", { sentinel: id, error: err.message }));
      await this.store.remove(id);
      await this.dedup.remove(id);
    });
    this.logger.info("sentinel removed", { sentinel: id });
    this.events.emit("sentinel:removed", { sentinelId: id });
  }

  async pollNow(): Promise<{ polled: string[] }> {
    await this.sweep("poll");
    const polled: string[] = [];
    for (const kind of this.plugins.providerKinds()) {
      const p = await this.plugins.provider(kind).catch(() => undefined);
      if (!p?.pollNow) continue;
      await p.pollNow();
      polled.push(kind);
    }
    return { polled };
  }

  async providers(): Promise<ProviderReport[]> {
    return Promise.all(
      this.plugins.providerKinds().map(async (kind) => {
        const description = this.plugins.description("provider", kind);
        try {
          const readiness = await (await this.plugins.provider(kind)).readiness();
          return { kind, ...(description ? { description } : {}), readiness };
        } catch (err) {
          return { kind, ...(description ? { description } : {}), readiness: { ready: false, detail: `provider failed: ${toSvcError(err).message}` } };
        }
      }),
    );
  }

  async setupProvider(kind: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const provider = await this.plugins.provider(kind);
    if (!provider.configure) throw new SvcError("invalid_input", `provider "${kind}" has no setup step`);
    return provider.configure(input);
  }

  ingest(provider: string, events: SvcEvent[]): Promise<IngestResult> {
    return this.track(this.ingestNow(provider, events));
  }

  private async ingestNow(provider: string, events: SvcEvent[]): Promise<IngestResult> {
    const list = events.map((e, i) => parseOrThrow(svcEventSchema, e, "event", `[${i}]`) as SvcEvent);
    const index = this.indexes.get(provider);
    const instance = await this.plugins.provider(provider).catch(() => undefined);
    const terminal = new Map<SvcEvent, string[]>();
    const perSentinel = new Map<string, SvcEvent[]>();
    for (const event of list) {
      const subjects = instance?.terminalSubjects?.(event) ?? [];
      if (subjects.length) terminal.set(event, subjects);
      for (const id of index?.match(event) ?? []) {
        const evs = perSentinel.get(id);
        if (evs) evs.push(event);
        else perSentinel.set(id, [event]);
      }
    }
    const matched: Matched = [];
    const queue = [...perSentinel];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [id, evs] = next;
        await this.mutex.run(id, () => this.deliverAll(id, evs, terminal, matched));
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELIVERY_CONCURRENCY, queue.length) }, worker));
    for (const subjects of terminal.values()) for (const s of subjects) await this.subjectTerminal(provider, s);
    return { accepted: list.length, matched };
  }

  async subjectTerminal(provider: string, subject: string): Promise<void> {
    for (const rec of this.store.all()) {
      if (rec.status !== "active" || rec.spec.provider !== provider || !endsOn(rec, [subject])) continue;
      await this.mutex.run(rec.id, () => this.expire(rec.id, "subject_terminal", "terminal"));
    }
  }

  async markSeen(sentinelId: string, eventId: string): Promise<void> {
    if (!this.store.get(sentinelId)) return;
    await this.dedup.markSeen(sentinelId, eventId);
  }

  active(provider?: string): SentinelView[] {
    const now = this.clock.now();
    const out: SentinelView[] = [];
    for (const rec of this.store.all()) {
      if (rec.status !== "active" || (provider && rec.spec.provider !== provider) || this.ending.has(rec.id)) continue;
      const reason = expiryReason(rec, now, Math.max(rec.deliveredCount, this.dedup.delivered(rec.id)));
      if (reason) this.expire(rec.id, reason, "poll").catch(() => undefined);
      else out.push(rec);
    }
    return out;
  }

  async isExpiredNow(sentinelId: string): Promise<boolean> {
    const rec = this.store.get(sentinelId);
    if (!rec || rec.status === "expired" || this.ending.has(sentinelId)) return true;
    await this.dedup.load(sentinelId);
    const reason = expiryReason(rec, this.clock.now(), this.dedup.delivered(sentinelId));
    if (!reason) return false;
    await this.expire(sentinelId, reason, "dispatch");
    return true;
  }

  async updateStoredTarget(
    sentinelId: string,
    mutate: (stored: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>,
  ): Promise<SentinelView> {
    return this.store.update(sentinelId, async (rec) => {
      const next = await mutate(structuredClone(rec.spec.target));
      return { ...rec, updatedAt: this.clock.now(), spec: { ...rec.spec, target: { ...next, kind: rec.spec.target.kind } } };
    });
  }

  /**
   * Delivers one sentinel's matched events in order; runs under the sentinel's mutex. The target
   * accepts events in order, a run of them at once when it can ({@link batchFrom}), and the dedup
   * appends of one run overlap the target's acceptance of the next: an outcome is final once its
   * append is durable, a repeated id waits for the earlier append, and `until` and expiry
   * decisions wait for the appends they count. Returns once every append is settled.
   */
  private async deliverAll(id: string, events: SvcEvent[], terminal: Map<SvcEvent, string[]>, out: Matched): Promise<void> {
    await this.dedup.load(id);
    const unsettled = new Map<string, Promise<void>>();
    const settle = async () => {
      await Promise.all(unsettled.values());
      unsettled.clear();
    };
    // A reason counting the deliveries not yet durable holds only once they are (one may fail).
    const reason = async () => {
      const r = this.reasonNow(id, unsettled.size);
      if (!r || unsettled.size === 0) return r;
      await settle();
      return this.reasonNow(id);
    };
    try {
      const ingressReason = this.reasonNow(id);
      if (ingressReason) await this.expire(id, ingressReason, "ingress");
      for (let i = 0; i < events.length; i++) {
        let event = events[i]!;
        const rec = this.store.get(id);
        if (!rec || rec.status !== "active" || this.ending.has(id)) {
          out.push({ sentinelId: id, eventId: event.id, outcome: "expired" });
          continue;
        }
        if (unsettled.has(event.id)) await settle();
        if (this.dedup.has(id, event.id)) {
          out.push({ sentinelId: id, eventId: event.id, outcome: "duplicate" });
        } else {
          const before = await reason();
          if (before) {
            await this.expire(id, before, "dispatch");
            out.push({ sentinelId: id, eventId: event.id, outcome: "expired" });
            continue;
          }
          const target = await this.plugins.target(rec.spec.target.kind).catch(() => undefined);
          const run = target?.deliverMany ? this.batchFrom(rec, events, i, terminal, unsettled) : [event];
          for (const [eventId, durable] of await this.deliverRun(rec, run, out)) unsettled.set(eventId, durable);
          i += run.length - 1;
          event = events[i]!;
          const after = await reason();
          if (after) await this.expire(id, after, "dispatch");
        }
        const subjects = terminal.get(event);
        if (subjects && endsOn(rec, subjects)) {
          await settle();
          await this.expire(id, "subject_terminal", "terminal");
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
  private batchFrom(rec: SentinelRecord, events: SvcEvent[], start: number, terminal: Map<SvcEvent, string[]>, unsettled: Map<string, unknown>): SvcEvent[] {
    const until = rec.spec.until;
    const room = until.kind === "count" ? until.n - this.dedup.delivered(rec.id) - unsettled.size : MAX_RUN;
    const run = [events[start]!];
    const ids = new Set([events[start]!.id]);
    for (let j = start + 1; j < events.length && run.length < Math.min(room, MAX_RUN); j++) {
      const subjects = terminal.get(events[j - 1]!);
      if (subjects && endsOn(rec, subjects)) break;
      const next = events[j]!;
      if (ids.has(next.id) || unsettled.has(next.id) || this.dedup.has(rec.id, next.id)) break;
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
  private async deliverRun(rec: SentinelRecord, run: SvcEvent[], out: Matched): Promise<Array<[string, Promise<void>]>> {
    const results = run.map((event) => {
      const result: Matched[number] = { sentinelId: rec.id, eventId: event.id, outcome: "delivered" };
      out.push(result);
      return result;
    });
    const failed = (i: number) => (err: unknown) => {
      const e = toSvcError(err);
      this.logger.warn("sentinel delivery failed", { sentinel: rec.id, event: run[i]!.id, code: e.code, error: e.message });
      results[i]!.outcome = "failed";
      results[i]!.error = e.message;
    };
    let acks: Array<PromiseSettledResult<TargetAck>>;
    try {
      const target = await this.plugins.target(rec.spec.target.kind);
      const deliveries = run.map((event) => ({ sentinel: rec, event }));
      acks = target.deliverMany && run.length > 1 ? await target.deliverMany(deliveries) : [{ status: "fulfilled", value: await target.deliver(deliveries[0]!) }];
    } catch (err) {
      run.forEach((_, i) => failed(i)(err));
      return [];
    }
    const durables: Array<[string, Promise<void>]> = [];
    run.forEach((event, i) => {
      const settled = acks[i];
      if (settled?.status !== "fulfilled") return failed(i)(settled ? settled.reason : new Error("the target gave no answer for this event"));
      const ack = settled.value.ack === "deferred" ? "deferred" : "now";
      const durable = this.dedup.recordDelivery(rec.id, event.id, ack).then(() => {
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

  /** Why the sentinel should end now, counting `pending` deliveries not yet durable as done. */
  private reasonNow(id: string, pending = 0): EndReason | undefined {
    const rec = this.store.get(id);
    return rec ? expiryReason(rec, this.clock.now(), this.dedup.delivered(id) + pending) : undefined;
  }

  /** Marks a sentinel expired (once), cancels its provider-side watch and tells its target. */
  private expire(id: string, reason: EndReason, via: ExpiryPoint): Promise<boolean> {
    const current = this.store.get(id);
    if (!current || current.status !== "active" || this.ending.has(id)) return Promise.resolve(false);
    const p = this.doExpire(current, reason, via).finally(() => this.ending.delete(id));
    this.ending.set(id, p);
    return p;
  }

  private async doExpire(current: SentinelRecord, reason: EndReason, via: ExpiryPoint): Promise<boolean> {
    const id = current.id;
    this.indexes.get(current.spec.provider ?? "")?.remove(id);
    const now = this.clock.now();
    await this.dedup.load(id);
    let rec: SentinelRecord;
    try {
      rec = await this.store.update(id, (r) => ({
        ...r,
        status: "expired",
        updatedAt: now,
        endedAt: now,
        endedReason: reason,
        deliveredCount: Math.max(r.deliveredCount, this.dedup.delivered(id)),
      }));
    } catch (err) {
      if (SvcError.is(err) && err.code === "not_found") return false;
      this.logger.error("sentinel expiry could not be stored", { sentinel: id, reason, via, error: toSvcError(err).message });
      throw err;
    }
    this.logger.info("sentinel ended:expired", { sentinel: id, reason, via });
    this.events.emit("sentinel:ended", { sentinelId: id, status: "expired", reason, via });
    await this.callProvider(rec, "unwatch");
    const target = await this.plugins.target(rec.spec.target.kind).catch(() => undefined);
    await target?.expired?.(rec).catch((err: Error) => this.logger.warn("target expiry hook failed", { sentinel: id, error: err.message }));
    return true;
  }

  /** Resolves once every sweep, ingest and expiry in progress has finished (module stop, tests). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inProgress]);
    await Promise.allSettled([...this.ending.values()]);
  }

  private async indexRecord(rec: SentinelRecord): Promise<void> {
    const kind = rec.spec.provider ?? defaultProvider(rec.spec.match);
    const provider = await this.plugins.provider(kind).catch(() => undefined);
    if (!provider) this.logger.warn("sentinel provider is not loaded", { sentinel: rec.id, provider: kind });
    let index = this.indexes.get(kind);
    if (!index) this.indexes.set(kind, (index = new SentinelIndex()));
    index.add(
      rec.id,
      rec.spec.match.map((c) => ({ sentinelId: rec.id, subject: c.subject, types: c.types ?? provider?.defaultTypes(c.subject) ?? ["*"] })),
    );
  }

  private async callProvider(rec: SentinelRecord, hook: "watch" | "unwatch"): Promise<void> {
    const provider = await this.plugins.provider(rec.spec.provider ?? "").catch(() => undefined);
    await provider?.[hook]?.(rec).catch((err: Error) => this.logger.warn(`provider ${hook} failed`, { sentinel: rec.id, provider: rec.spec.provider, error: err.message }));
  }

  private async projectRecord(rec: SentinelRecord): Promise<SentinelProjection> {
    await this.dedup.load(rec.id);
    const target = await this.plugins.target(rec.spec.target.kind).catch(() => undefined);
    return projectSentinel(rec, target, this.dedup.delivered(rec.id));
  }

  private require(id: string): SentinelRecord {
    const rec = this.store.get(id);
    if (!rec) throw new SvcError("not_found", `no sentinel ${id}; list them with \`svc sentinel list\``);
    return rec;
  }
}

/** Whether one of `subjects` is a clause subject of `rec` (prefix clauses compare without the `*`). */
function endsOn(rec: SentinelRecord, subjects: string[]): boolean {
  if (rec.spec.until.kind !== "subject_terminal") return false;
  return rec.spec.match.some((c) => subjects.includes(c.subject.endsWith("*") ? c.subject.slice(0, -1) : c.subject));
}
