/** The periodic expiry tick as a service, so tests drive it by hand instead of waiting. */
export interface Ticker {
  /** Calls `fn` every `ms`; returns a function that stops it. */
  every(ms: number, fn: () => void): () => void;
}

export const intervalTicker: Ticker = {
  every(ms, fn) {
    const timer = setInterval(fn, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

/** A ticker that fires only when told to. */
export class ManualTicker implements Ticker {
  private readonly fns = new Set<() => void>();
  every(_ms: number, fn: () => void): () => void {
    this.fns.add(fn);
    return () => this.fns.delete(fn);
  }
  fire(): void {
    for (const fn of this.fns) fn();
  }
}

/** Default tick: 30 s; `SVC_SENTINEL_TICK_MS` overrides it (minimum 100 ms). */
export function tickIntervalMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.SVC_SENTINEL_TICK_MS);
  return Number.isFinite(n) && n >= 100 ? n : 30_000;
}
