/**
 * The sentinel engine: the one object the daemon registers (SENTINELS) and offers plugins as the
 * host service "sentinels". It implements the management API ({@link SentinelService}) and the
 * plugin-facing ingress by composing the parts, each with one job:
 * - {@link SentinelRegistry} (registry.ts): load, create, list, views, remove, stored-target updates, providers;
 * - {@link SentinelIngest} (ingest.ts): matching pushed/polled events and handing them to delivery;
 * - {@link SentinelDelivery} (delivery.ts): one sentinel's events to its target, dedup and acks;
 * - {@link SentinelExpirer} (expirer.ts): expiry once per sentinel, sweeps, terminal subjects;
 * - {@link SentinelLedgers} (ledgers.ts): where each sentinel's accepted events are recorded;
 * - {@link IdempotentCreates} (idempotency.ts): the idempotency-key rule around create;
 * - {@link SentinelIndexes} (indexes.ts) and {@link SentinelHooks} (hooks.ts), shared by them.
 * It also tracks the sweeps and ingests in progress for {@link settled} (daemon stop).
 */
import { inject, injectable } from "tsyringe";
import type { CredentialStore, IngestResult, SentinelView } from "../plugin-api/context.js";
import type { SvcEvent } from "../plugin-api/events.js";
import type { TargetInstance, TargetRefreshResult, TargetResumeResult } from "../plugin-api/target.js";
import { SvcError } from "../errors.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import type { Clock, Random } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import { CLOCK, CREDENTIALS, DAEMON_EVENTS, LOGGER, RANDOM } from "../tokens.js";
import { SENTINEL_DEDUP, SENTINEL_PLUGINS, SENTINEL_STORE } from "./tokens.js";
import type { SentinelDedup } from "./dedup.js";
import { SentinelDelivery } from "./delivery.js";
import { SentinelExpirer } from "./expirer.js";
import type { ExpiryPoint } from "./expiry.js";
import { SentinelHooks } from "./hooks.js";
import { IdempotentCreates } from "./idempotency.js";
import { SentinelIndexes } from "./indexes.js";
import { compileEventFilter } from "./event-filter.js";
import { SentinelIngest } from "./ingest.js";
import { SentinelLedgers } from "./ledgers.js";
import { KeyedMutex } from "./keyed-mutex.js";
import type { SentinelPlugins } from "./plugin-access.js";
import { SentinelRegistry } from "./registry.js";
import { RequestFingerprints } from "./request-fingerprint.js";
import type {
  CreateOptions,
  EventFilter,
  IngestObserver,
  ProviderReport,
  SentinelProjection,
  SentinelRecord,
  SentinelService,
  SentinelStatus,
  SentinelSummary,
} from "./service.js";
import type { SentinelRecordStore } from "./record-store.js";

@injectable()
export class SentinelEngine implements SentinelService {
  private readonly registry: SentinelRegistry;
  private readonly ingress: SentinelIngest;
  private readonly expirer: SentinelExpirer;
  private readonly creates: IdempotentCreates;
  /** Sweeps and ingests in progress, awaited by {@link settled} (daemon stop). */
  private readonly inProgress = new Set<Promise<unknown>>();

  constructor(
    @inject(SENTINEL_STORE as symbol) private readonly store: SentinelRecordStore,
    @inject(SENTINEL_DEDUP as symbol) dedup: SentinelDedup,
    @inject(SENTINEL_PLUGINS as symbol) private readonly plugins: SentinelPlugins,
    @inject(CLOCK as symbol) clock: Clock,
    @inject(RANDOM as symbol) random: Random,
    @inject(LOGGER as symbol) logger: Logger,
    @inject(DAEMON_EVENTS as symbol) events: DaemonEventBus,
    @inject(CREDENTIALS as symbol) credentials: CredentialStore,
  ) {
    const log = logger.child({ area: "sentinels" });
    const mutex = new KeyedMutex();
    const indexes = new SentinelIndexes(plugins, log);
    const hooks = new SentinelHooks(plugins, log);
    const ledgers = new SentinelLedgers(store, dedup, plugins, log);
    this.expirer = new SentinelExpirer(store, ledgers, clock, log, events, indexes, hooks, mutex);
    const delivery = new SentinelDelivery(store, ledgers, plugins, log, events, this.expirer);
    this.ingress = new SentinelIngest(store, ledgers, plugins, indexes, mutex, this.expirer, delivery, log);
    this.registry = new SentinelRegistry(store, ledgers, plugins, clock, random, log, events, indexes, hooks, mutex);
    this.creates = new IdempotentCreates(clock, new RequestFingerprints(credentials));
    store.onRemoteChange?.((id, before, after) => this.applyRemoteChange(id, before, after));
  }

  /** A sentinel another daemon of the team created, changed or removed (see SentinelRegistry.applyRemote). */
  async applyRemoteChange(
    id: string,
    before: SentinelRecord | undefined,
    after: SentinelRecord | undefined,
  ): Promise<void> {
    await this.registry.applyRemote(id, before, after);
    if (!after) this.creates.forget(id);
  }

  /** Loads the store, indexes the active sentinels and drops orphan dedup files (then sweep "startup"). */
  async load(): Promise<void> {
    await this.registry.load();
    this.creates.load(this.store.all());
  }

  /** Expires every active sentinel whose `until` is reached (startup, periodic tick, poll). */
  sweep(via: ExpiryPoint): Promise<string[]> {
    return this.track(this.expirer.sweep(via));
  }

  create(input: unknown, principal: string, options: CreateOptions = {}): Promise<SentinelProjection> {
    return this.creates.create(input, principal, options.idempotencyKey, {
      make: (stamp) => this.registry.create(input, principal, stamp),
      replay: (id) => this.registry.project(id),
    });
  }

  list(): Promise<SentinelProjection[]> {
    return this.registry.list();
  }

  summary(): Promise<SentinelSummary> {
    return this.registry.summary();
  }

  get(id: string): SentinelView | undefined {
    return this.registry.get(id);
  }

  project(id: string): Promise<SentinelProjection> {
    return this.registry.project(id);
  }

  status(id: string): Promise<SentinelStatus> {
    return this.registry.status(id);
  }

  async remove(id: string): Promise<void> {
    await this.registry.remove(id);
    this.creates.forget(id);
  }

  async pollNow(): Promise<{ polled: string[] }> {
    await this.sweep("poll");
    return this.registry.pollProviders();
  }

  async refreshTarget(id: string, input: Record<string, unknown>, principal: string): Promise<TargetRefreshResult> {
    const { view, target } = await this.targetOf(id);
    if (!target.refresh)
      throw new SvcError(
        "invalid_input",
        `sentinel ${id} has a ${view.spec.target.kind} target, which cannot be refreshed`,
      );
    return target.refresh(view, input, { sentinelId: id, principal });
  }

  async resume(id: string): Promise<TargetResumeResult> {
    const { view, target } = await this.targetOf(id);
    if (!target.resume)
      throw new SvcError(
        "invalid_input",
        `sentinel ${id} has a ${view.spec.target.kind} target, whose delivery is never suspended`,
      );
    return target.resume(view);
  }

  private async targetOf(id: string): Promise<{ view: SentinelView; target: TargetInstance }> {
    const view = this.registry.get(id);
    if (!view) throw new SvcError("not_found", `no sentinel ${id}`);
    return { view, target: await this.plugins.target(view.spec.target.kind) };
  }

  providers(): Promise<ProviderReport[]> {
    return this.registry.providers();
  }

  setupProvider(kind: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    return this.registry.setupProvider(kind, input);
  }

  ingest(provider: string, events: SvcEvent[]): Promise<IngestResult> {
    return this.track(this.ingress.ingest(provider, events));
  }

  observeIngest(observer: IngestObserver): () => void {
    return this.ingress.observe(observer);
  }

  eventFilter(provider: string, match: unknown): Promise<EventFilter> {
    return compileEventFilter(this.plugins, provider, match);
  }

  subjectTerminal(provider: string, subject: string): Promise<void> {
    return this.expirer.subjectTerminal(provider, subject);
  }

  markSeen(sentinelId: string, eventId: string): Promise<void> {
    return this.ingress.markSeen(sentinelId, eventId);
  }

  active(provider?: string): SentinelView[] {
    return this.expirer.active(provider);
  }

  isExpiredNow(sentinelId: string): Promise<boolean> {
    return this.expirer.isExpiredNow(sentinelId);
  }

  updateStoredTarget(
    sentinelId: string,
    mutate: (stored: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>,
  ): Promise<SentinelView> {
    return this.registry.updateStoredTarget(sentinelId, mutate);
  }

  /** Resolves once every sweep, ingest and expiry in progress has finished (module stop, tests). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inProgress]);
    await this.expirer.settled();
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.inProgress.add(p);
    void p.catch(() => undefined).finally(() => this.inProgress.delete(p));
    return p;
  }
}
