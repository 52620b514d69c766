/**
 * Sentinel management: loading the store at startup, creation and removal through the target
 * and provider plugins, listing and views (projections, status), updates of the stored target
 * (e.g. secret rotation), and the provider operations (readiness, setup, polling).
 */
import { SvcError, toSvcError } from "../errors.js";
import type { SentinelView } from "../plugin-api/context.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import type { Clock, Random } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import type { SentinelLedgers } from "./ledgers.js";
import type { SentinelHooks } from "./hooks.js";
import type { SentinelIndexes } from "./indexes.js";
import type { KeyedMutex } from "./keyed-mutex.js";
import type { SentinelPlugins } from "./plugin-access.js";
import { redactUrlsDeep } from "../redaction/url.js";
import { projectSentinel } from "./projection.js";
import type {
  IdempotencyStamp,
  ProviderReport,
  SentinelProjection,
  SentinelRecord,
  SentinelStatus,
  SentinelSummary,
} from "./service.js";
import type { SentinelRecordStore } from "./record-store.js";
import { validateSpec } from "./validate.js";

export class SentinelRegistry {
  constructor(
    private readonly store: SentinelRecordStore,
    private readonly ledgers: SentinelLedgers,
    private readonly plugins: SentinelPlugins,
    private readonly clock: Clock,
    private readonly random: Random,
    private readonly logger: Logger,
    private readonly events: DaemonEventBus,
    private readonly indexes: SentinelIndexes,
    private readonly hooks: SentinelHooks,
    private readonly mutex: KeyedMutex,
  ) {}

  /** Loads the store, indexes the active sentinels and drops orphan dedup files. */
  async load(): Promise<void> {
    const records = await this.store.load();
    for (const rec of records) if (rec.status === "active") await this.indexes.add(rec);
    for (const id of await this.ledgers.orphans(new Set(records.map((r) => r.id)))) await this.ledgers.remove(id);
  }

  /** Creates a sentinel; `idempotency` is stored in its record (the same atomic write). */
  async create(input: unknown, principal: string, idempotency?: IdempotencyStamp): Promise<SentinelProjection> {
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
      ...(idempotency ? { idempotency } : {}),
    };
    try {
      await this.store.insert(rec);
    } catch (err) {
      await target.removed?.(rec).catch(() => undefined);
      throw err;
    }
    await this.indexes.add(rec);
    this.logger.info("sentinel created", { sentinel: id, provider: spec.provider, target: spec.target.kind });
    this.events.emit("sentinel:created", { sentinelId: id, provider: spec.provider, target: spec.target.kind });
    await this.hooks.provider(rec, "watch");
    // A new sentinel has no record to read yet: its count is whatever a delivery since loaded.
    return projectSentinel(rec, target, this.ledgers.delivered(rec.id));
  }

  async list(): Promise<SentinelProjection[]> {
    const all = this.store.all().sort((a, b) => a.createdAt - b.createdAt || a.id.localeCompare(b.id));
    return Promise.all(all.map((r) => this.projectRecord(r)));
  }

  async summary(): Promise<SentinelSummary> {
    const s: SentinelSummary = { total: 0, active: 0, expired: 0, byTarget: {}, deliveries: { pending: 0, dead: 0 } };
    const idsByKind = new Map<string, Set<string>>();
    for (const r of this.store.all()) {
      s.total++;
      s[r.status]++;
      const kind = r.spec.target.kind;
      s.byTarget[kind] = (s.byTarget[kind] ?? 0) + 1;
      let ids = idsByKind.get(kind);
      if (!ids) idsByKind.set(kind, (ids = new Set()));
      ids.add(r.id);
    }
    for (const [kind, ids] of idsByKind) {
      const target = await this.plugins.target(kind).catch(() => undefined);
      const counts = await target?.deliveryCounts?.(ids).catch(() => undefined);
      s.deliveries.pending += counts?.pending ?? 0;
      s.deliveries.dead += counts?.dead ?? 0;
    }
    return s;
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
    const target = await this.hooks.targetOf(rec);
    const extra = await target?.status?.(rec);
    // A target's status is listed as its projection is: URL credentials redacted (projection.ts).
    return extra ? { ...projection, target: redactUrlsDeep(extra) as typeof extra } : projection;
  }

  async remove(id: string): Promise<void> {
    this.require(id);
    await this.mutex.run(id, async () => {
      const rec = this.require(id);
      this.indexes.remove(rec);
      if (rec.status === "active") await this.hooks.provider(rec, "unwatch");
      await this.hooks.target(rec, "removed");
      await this.store.remove(id);
      await this.ledgers.remove(id);
    });
    this.logger.info("sentinel removed", { sentinel: id });
    this.events.emit("sentinel:removed", { sentinelId: id });
  }

  /**
   * Follows a change another daemon of the team made to a sentinel (a shared store): a new active
   * one is indexed and watched, one that ended or was removed is unindexed and unwatched (its
   * local dedup record dropped when removed), a changed one is re-indexed. Target hooks ran on the
   * daemon that made the change.
   */
  async applyRemote(id: string, before: SentinelRecord | undefined, after: SentinelRecord | undefined): Promise<void> {
    await this.mutex.run(id, async () => {
      const was = before?.status === "active" ? before : undefined;
      const is = after?.status === "active" ? after : undefined;
      if (was) this.indexes.remove(was);
      if (is) await this.indexes.add(is);
      if (is && !was) await this.hooks.provider(is, "watch");
      if (was && !is) await this.hooks.provider(after ?? was, "unwatch");
      if (!after) await this.ledgers.remove(id);
    });
    if (after && !before) {
      const { provider, target } = after.spec;
      this.events.emit("sentinel:created", { sentinelId: id, provider, target: target.kind, via: "team" });
    } else if (!after) this.events.emit("sentinel:removed", { sentinelId: id, via: "team" });
    else if (before?.status === "active" && after.status === "expired")
      this.events.emit("sentinel:ended", { sentinelId: id, status: "expired", reason: after.endedReason, via: "team" });
  }

  async updateStoredTarget(
    sentinelId: string,
    mutate: (stored: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>,
  ): Promise<SentinelView> {
    return this.store.update(sentinelId, async (rec) => {
      const next = await mutate(structuredClone(rec.spec.target));
      return {
        ...rec,
        updatedAt: this.clock.now(),
        spec: { ...rec.spec, target: { ...next, kind: rec.spec.target.kind } },
      };
    });
  }

  /** Asks every loaded provider that can poll to poll now; returns their kinds. */
  async pollProviders(): Promise<{ polled: string[] }> {
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
          return {
            kind,
            ...(description ? { description } : {}),
            readiness: { ready: false, detail: `provider failed: ${toSvcError(err).message}` },
          };
        }
      }),
    );
  }

  async setupProvider(kind: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const provider = await this.plugins.provider(kind);
    if (!provider.configure) throw new SvcError("invalid_input", `provider "${kind}" has no setup step`);
    return provider.configure(input);
  }

  private async projectRecord(rec: SentinelRecord): Promise<SentinelProjection> {
    await this.ledgers.load(rec.id);
    const target = await this.hooks.targetOf(rec);
    return projectSentinel(rec, target, this.ledgers.delivered(rec.id));
  }

  private require(id: string): SentinelRecord {
    const rec = this.store.get(id);
    if (!rec) throw new SvcError("not_found", `no sentinel ${id}; list them with \`svc sentinel list\``);
    return rec;
  }
}
