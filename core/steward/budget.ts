/**
 * The steward's budget: at most one judgement per session per trigger kind per window
 * (`extJudge.windowSec`; 0: no limit). A judgement takes its slot when it starts, whatever its
 * outcome, so a judge that keeps failing is not asked again within the window either.
 */
const MAX_ENTRIES = 10_000;

export class JudgeBudget {
  private readonly last = new Map<string, number>();

  /** Takes the slot of (session, kind) at `now` and returns true, or false when the window still holds it. */
  take(sessionId: string, kind: string, now: number, windowMs: number): boolean {
    if (!(windowMs > 0)) return true;
    const key = `${sessionId}\u0000${kind}`;
    const at = this.last.get(key);
    if (at !== undefined && now - at < windowMs) return false;
    this.last.delete(key);
    this.last.set(key, now);
    if (this.last.size > MAX_ENTRIES) this.prune(now, windowMs);
    return true;
  }

  private prune(now: number, windowMs: number): void {
    for (const [k, at] of this.last) {
      if (this.last.size <= MAX_ENTRIES / 2 && now - at < windowMs) break;
      this.last.delete(k);
    }
  }
}
