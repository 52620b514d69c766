/**
 * Where each sentinel's accepted events are recorded, so that an id is a duplicate exactly when
 * that record has it, and `deliveredCount` and `until: count` count what it holds:
 * - a target with a {@link TargetLedger} of its own (the webhook target's outbox rows) is the
 *   only record of its sentinels' events: the engine writes nothing of its own for them;
 * - any other target (a session) gets the engine's per-sentinel dedup journal ({@link SentinelDedup}).
 * A sentinel's ledger is chosen by its target kind at {@link load}. A sentinel that has the
 * engine's files from before its target kept a ledger has them adopted by the target (one
 * durable append) and then removed, so its count and its last ids carry over.
 */
import type { Logger } from "../runtime/logger.js";
import type { TargetLedger } from "../plugin-api/target.js";
import type { SentinelDedup } from "./dedup.js";
import type { SentinelPlugins } from "./plugin-access.js";
import type { SentinelRecordStore } from "./record-store.js";

export class SentinelLedgers {
  /** The target's ledger of each loaded sentinel, or null when the engine's dedup records it. */
  private readonly chosen = new Map<string, TargetLedger | null>();
  private readonly loading = new Map<string, Promise<void>>();
  /** Sentinels with dedup files on disk, listed once (for the adoption check). */
  private withFiles?: Promise<Set<string>>;

  constructor(
    private readonly store: SentinelRecordStore,
    readonly dedup: SentinelDedup,
    private readonly plugins: SentinelPlugins,
    private readonly logger: Logger,
  ) {
    dedup.onDamage = (r) => {
      if (r.missing) {
        this.logger.error(
          "sentinel dedup journal is missing changes it had acknowledged as durable (cut from its end); they cannot be recovered, and the loss is kept until acknowledged (see svc doctor)",
          {
            sentinel: r.sentinelId,
            file: r.missing.file,
            recordsMissing: r.missing.records,
            bytesMissing: r.missing.bytes,
            ...(r.missing.seqs ? { seqs: r.missing.seqs } : {}),
            lossRecord: r.missing.kept,
          },
        );
        if (!r.snapshot && !r.damagedLines) return;
      }
      if (!r.snapshot && !r.damagedLines) {
        this.logger.warn(
          "sentinel dedup journal ended in a torn line (a write cut short, never acknowledged); dropped",
          { sentinel: r.sentinelId, tornBytes: r.tornBytes ?? 0 },
        );
        return;
      }
      this.logger.error(
        "sentinel dedup record was damaged: what it lost is accepted again, the damaged files are kept",
        {
          sentinel: r.sentinelId,
          snapshot: r.snapshot?.state ?? "ok",
          ...(r.snapshot?.copy ? { snapshotCopy: r.snapshot.copy } : {}),
          damagedLines: r.damagedLines?.lines.length ?? 0,
          ...(r.damagedLines ? { journalCopy: r.damagedLines.copy } : {}),
          tornBytes: r.tornBytes ?? 0,
          delivered: r.delivered,
          eventIdsKept: r.known,
          ...(r.repairFailed ? { rewriteFailed: r.repairFailed } : {}),
        },
      );
    };
  }

  /** Chooses and loads the sentinel's ledger (once; again after {@link remove}). */
  load(sentinelId: string): Promise<void> {
    if (this.chosen.has(sentinelId)) return Promise.resolve();
    let p = this.loading.get(sentinelId);
    if (!p) {
      p = this.choose(sentinelId).finally(() => this.loading.delete(sentinelId));
      this.loading.set(sentinelId, p);
    }
    return p;
  }

  /** True when the event was accepted before. Requires {@link load}. */
  has(sentinelId: string, eventId: string): boolean {
    const own = this.chosen.get(sentinelId);
    return own ? own.has(sentinelId, eventId) : this.dedup.has(sentinelId, eventId);
  }

  /** Events accepted so far. Requires {@link load} (0 before). */
  delivered(sentinelId: string): number {
    const own = this.chosen.get(sentinelId);
    return own ? own.accepted(sentinelId) : this.dedup.delivered(sentinelId);
  }

  /** Records an accepted event: nothing to write when the target's ledger already holds it. */
  recordDelivery(sentinelId: string, eventId: string, ack: "now" | "deferred"): Promise<void> {
    if (this.chosen.get(sentinelId)) return Promise.resolve();
    return this.dedup.recordDelivery(sentinelId, eventId, ack);
  }

  /** A deferred delivery reached a terminal state (a target's own ledger needs no word of it). */
  async markSeen(sentinelId: string, eventId: string): Promise<void> {
    await this.load(sentinelId);
    if (this.chosen.get(sentinelId)) return;
    await this.dedup.markSeen(sentinelId, eventId);
  }

  /** The sentinel was removed: the engine's files go; a target's ledger is the target's business. */
  async remove(sentinelId: string): Promise<void> {
    await this.loading.get(sentinelId)?.catch(() => undefined);
    this.chosen.delete(sentinelId);
    (await this.withFiles)?.delete(sentinelId);
    await this.dedup.remove(sentinelId);
  }

  /** Sentinel ids with engine dedup files that are not in `known`. */
  orphans(known: ReadonlySet<string>): Promise<string[]> {
    return this.dedup.orphans(known);
  }

  close(): Promise<void> {
    return this.dedup.close();
  }

  private async choose(sentinelId: string): Promise<void> {
    const kind = this.store.get(sentinelId)?.spec.target.kind;
    let own: TargetLedger | undefined;
    let known = true;
    if (kind !== undefined) {
      // A target that cannot be set up fails its deliveries anyway; the choice is made again next time.
      own = await this.plugins.target(kind).then(
        (t) => t.ledger,
        () => ((known = false), undefined),
      );
    }
    if (!own) {
      await this.dedup.load(sentinelId);
      if (known) this.chosen.set(sentinelId, null);
      return;
    }
    await own.ready();
    if ((await this.filesListed()).has(sentinelId)) await this.adopt(sentinelId, own);
    this.chosen.set(sentinelId, own);
  }

  /** Hands the engine's old record of a sentinel to its target's ledger, then removes its files. */
  private async adopt(sentinelId: string, own: TargetLedger): Promise<void> {
    await this.dedup.load(sentinelId);
    const record = { eventIds: this.dedup.known(sentinelId), accepted: this.dedup.delivered(sentinelId) };
    await own.adopt(sentinelId, record);
    await this.dedup.remove(sentinelId);
    (await this.filesListed()).delete(sentinelId);
    this.logger.info("sentinel dedup record handed to its target's own record", {
      sentinel: sentinelId,
      accepted: record.accepted,
      eventIds: record.eventIds.length,
    });
  }

  private filesListed(): Promise<Set<string>> {
    return (this.withFiles ??= this.dedup.orphans(new Set()).then((ids) => new Set(ids)));
  }
}
