import { randomBytes } from "node:crypto";
import { monotonicFactory } from "ulid";

/** Wall-clock time as a service, so time-based rules are tested with a fake clock. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Waiting as a service: retry waits are tested without real waiting. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    timer.unref?.();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

/** Randomness and ids as a service. */
export interface Random {
  bytes(n: number): Buffer;
  hex(nBytes: number): string;
  /** A monotonic ULID (sortable by creation time). */
  ulid(): string;
}

/**
 * A uniform [0, 1) source for ULIDs drawn from a pool of cryptographic random bytes (one byte per
 * call: a ULID character needs 5 bits). The ulid package's default draws from the OS per character.
 */
function pooledPrng(poolSize = 4096): () => number {
  let pool = randomBytes(poolSize);
  let next = 0;
  return () => {
    if (next === pool.length) {
      pool = randomBytes(poolSize);
      next = 0;
    }
    return pool[next++]! / 256;
  };
}

export function createRandom(clock: Clock = systemClock): Random {
  const ulid = monotonicFactory(pooledPrng());
  return {
    bytes: (n) => randomBytes(n),
    hex: (n) => randomBytes(n).toString("hex"),
    ulid: () => ulid(clock.now()),
  };
}

/** A controllable clock for tests. */
export class FakeClock implements Clock {
  constructor(private t = Date.UTC(2026, 0, 1)) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
  set(ms: number): void {
    this.t = ms;
  }
}
