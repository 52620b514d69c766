/**
 * Deduplication by `(sentinelId, event.id)`, one small file per sentinel under
 * `$SVC_HOME/sentinels-dedup/<sentinelId>.json`, so a delivery rewrites only its sentinel's file
 * (never sentinels.json). It keeps:
 * - `seen`: the last 1000 event ids marked seen (oldest evicted first);
 * - `inflight`: ids a target acked `deferred` and has not yet marked seen. They count as
 *   duplicates too, so a re-pushed event never reaches the target a second time while its first
 *   delivery is still pending; they move to `seen` on markSeen;
 * - `delivered`: how many events were delivered (for `until: count` and the listings).
 * Writes are atomic and fsynced. Callers serialize per sentinel (the engine's keyed mutex).
 */
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { inject, injectable } from "tsyringe";
import { readJsonFile, writeJsonFile } from "../storage/json-file.js";
import { HOME } from "../tokens.js";

export const DEDUP_DIR = "sentinels-dedup";
export const DEDUP_LIMIT = 1000;

interface DedupFile {
  seen: string[];
  inflight: string[];
  delivered: number;
}

interface DedupState {
  seen: Set<string>;
  inflight: Set<string>;
  delivered: number;
}

@injectable()
export class SentinelDedup {
  readonly dir: string;
  private readonly states = new Map<string, DedupState>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(@inject(HOME as symbol) home: string) {
    this.dir = join(home, DEDUP_DIR);
  }

  /** Loads (once) the state of a sentinel; a missing or unreadable file is an empty state. */
  load(sentinelId: string): Promise<void> {
    if (this.states.has(sentinelId)) return Promise.resolve();
    let p = this.loading.get(sentinelId);
    if (!p) {
      p = readJsonFile<DedupFile>(this.file(sentinelId))
        .catch(() => undefined)
        .then((file) => {
          this.loading.delete(sentinelId);
          if (this.states.has(sentinelId)) return;
          this.states.set(sentinelId, {
            seen: new Set(Array.isArray(file?.seen) ? file.seen.slice(-DEDUP_LIMIT) : []),
            inflight: new Set(Array.isArray(file?.inflight) ? file.inflight : []),
            delivered: typeof file?.delivered === "number" ? file.delivered : 0,
          });
        });
      this.loading.set(sentinelId, p);
    }
    return p;
  }

  /** True when the event was delivered before (seen or in flight). Requires {@link load}. */
  has(sentinelId: string, eventId: string): boolean {
    const s = this.states.get(sentinelId);
    return !!s && (s.seen.has(eventId) || s.inflight.has(eventId));
  }

  delivered(sentinelId: string): number {
    return this.states.get(sentinelId)?.delivered ?? 0;
  }

  inflight(sentinelId: string): string[] {
    return [...(this.states.get(sentinelId)?.inflight ?? [])];
  }

  /** Records a delivery: `now` marks it seen, `deferred` keeps it in flight until markSeen. */
  async recordDelivery(sentinelId: string, eventId: string, ack: "now" | "deferred"): Promise<void> {
    await this.load(sentinelId);
    const s = this.states.get(sentinelId)!;
    s.delivered += 1;
    if (ack === "deferred") s.inflight.add(eventId);
    else addSeen(s, eventId);
    await this.persist(sentinelId, s);
  }

  /** Moves an event to `seen` (a deferred delivery reached a terminal state). */
  async markSeen(sentinelId: string, eventId: string): Promise<void> {
    await this.load(sentinelId);
    const s = this.states.get(sentinelId)!;
    if (s.seen.has(eventId) && !s.inflight.has(eventId)) return;
    s.inflight.delete(eventId);
    addSeen(s, eventId);
    await this.persist(sentinelId, s);
  }

  async remove(sentinelId: string): Promise<void> {
    await this.loading.get(sentinelId);
    this.states.delete(sentinelId);
    await rm(this.file(sentinelId), { force: true });
  }

  /** Files of sentinels that no longer exist (left by a crash between the two removals). */
  async orphans(known: ReadonlySet<string>): Promise<string[]> {
    const names = await readdir(this.dir).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5)).filter((id) => !known.has(id));
  }

  private file(sentinelId: string): string {
    return join(this.dir, `${sentinelId}.json`);
  }

  private async persist(sentinelId: string, s: DedupState): Promise<void> {
    const file: DedupFile = { seen: [...s.seen], inflight: [...s.inflight], delivered: s.delivered };
    await writeJsonFile(this.file(sentinelId), file);
  }
}

function addSeen(s: DedupState, eventId: string): void {
  s.seen.delete(eventId);
  s.seen.add(eventId);
  while (s.seen.size > DEDUP_LIMIT) s.seen.delete(s.seen.values().next().value as string);
}
