/**
 * The ephemeral keys of the sealed tunnel requests already served. A key is kept until a replay
 * of its request would be refused as stale anyway (its timestamp plus the freshness window has
 * passed), and never forgotten before: forgetting a fresh key would reopen that replay. The
 * cache is bounded; when it is full of fresh keys it takes no more (the request is refused).
 */
export type Claim = "new" | "replay" | "full";

export class ReplayCache {
  /** key → the time after which a replay of it is stale. */
  private readonly until = new Map<string, number>();
  private prunedAt = -Infinity;

  constructor(
    private readonly windowMs: number,
    private readonly max: number,
  ) {}

  get size(): number {
    return this.until.size;
  }

  /** Remembers `key` of a request stamped `ts`, as of `now`; says whether it is new, a replay, or there is no room. */
  claim(key: string, ts: number, now: number): Claim {
    const staleAt = this.until.get(key);
    if (staleAt !== undefined && staleAt >= now) return "replay";
    if (this.until.size >= this.max || now - this.prunedAt > this.windowMs) this.prune(now);
    if (this.until.size >= this.max) return "full";
    this.until.set(key, ts + this.windowMs);
    return "new";
  }

  private prune(now: number): void {
    this.prunedAt = now;
    for (const [k, staleAt] of this.until) if (staleAt < now) this.until.delete(k);
  }
}
