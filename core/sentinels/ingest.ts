/**
 * The ingress of pushed and polled events: validation, matching through the provider's index,
 * delivery per matched sentinel (in parallel across sentinels, in order and under the mutex
 * within one), then the ends by terminal subjects; and marking deferred deliveries seen.
 */
import type { IngestResult } from "../plugin-api/context.js";
import type { SvcEvent } from "../plugin-api/events.js";
import type { SentinelLedgers } from "./ledgers.js";
import type { Matched, SentinelDelivery } from "./delivery.js";
import type { SentinelExpirer } from "./expirer.js";
import type { SentinelIndexes } from "./indexes.js";
import type { Logger } from "../runtime/logger.js";
import type { KeyedMutex } from "./keyed-mutex.js";
import type { SentinelPlugins } from "./plugin-access.js";
import type { IngestObserver } from "./service.js";
import type { SentinelRecordStore } from "./record-store.js";
import { svcEventSchema, parseOrThrow } from "./spec-schema.js";

/**
 * Sentinels delivered to in parallel by one ingest (each sentinel's events stay in order). Above a
 * push's usual width: a batch of 64 events for 64 sentinels then waits for one group commit, not
 * two in a row (which halved the rate of pushers that wait for each answer).
 */
export const DELIVERY_CONCURRENCY = 256;

export class SentinelIngest {
  private readonly observers = new Set<IngestObserver>();

  constructor(
    private readonly store: SentinelRecordStore,
    private readonly ledgers: SentinelLedgers,
    private readonly plugins: SentinelPlugins,
    private readonly indexes: SentinelIndexes,
    private readonly mutex: KeyedMutex,
    private readonly expirer: SentinelExpirer,
    private readonly delivery: SentinelDelivery,
    private readonly logger: Logger,
  ) {}

  /** Adds an observer of validated ingests; returns its removal. */
  observe(observer: IngestObserver): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  async ingest(provider: string, events: SvcEvent[]): Promise<IngestResult> {
    const list = events.map((e, i) => parseOrThrow(svcEventSchema, e, "event", `[${i}]`) as SvcEvent);
    for (const observe of this.observers) {
      try {
        observe(provider, list);
      } catch (err) {
        this.logger.error("an ingest observer failed", { provider, error: (err as Error).message });
      }
    }
    const index = this.indexes.of(provider);
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
        await this.mutex.run(id, () => this.delivery.deliverAll(id, evs, terminal, matched));
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELIVERY_CONCURRENCY, queue.length) }, worker));
    for (const subjects of terminal.values()) for (const s of subjects) await this.expirer.subjectTerminal(provider, s);
    return { accepted: list.length, matched };
  }

  async markSeen(sentinelId: string, eventId: string): Promise<void> {
    if (!this.store.get(sentinelId)) return;
    await this.ledgers.markSeen(sentinelId, eventId);
  }
}
