/**
 * The challenge verification cache: a success is remembered for 10 minutes per
 * `(principal, normalizedUrl, sha256(secret))`, so a changed secret always re-verifies.
 * Time comes from the injected Clock. Keys hold a digest of the secret, never the secret.
 */
import { createHash } from "node:crypto";
import type { Clock } from "../../core/plugin-api/index.js";

export const CHALLENGE_CACHE_TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 4_096;

/** Scheme and host lower-cased, default port 443 dropped (WHATWG URL serialization does both). */
export function normalizeCallbackUrl(url: string | URL): string {
  return new URL(url).href;
}

export function challengeCacheKey(principal: string, url: string | URL, secret: string): string {
  const digest = createHash("sha256").update(secret, "utf8").digest("hex");
  return JSON.stringify([principal, normalizeCallbackUrl(url), digest]);
}

export interface ChallengeCache {
  /** True while a success for this key is younger than the TTL. */
  has(key: string): boolean;
  remember(key: string): void;
}

export function createChallengeCache(clock: Clock, ttlMs = CHALLENGE_CACHE_TTL_MS): ChallengeCache {
  const verifiedAt = new Map<string, number>();
  const fresh = (at: number) => clock.now() - at < ttlMs;
  return {
    has(key) {
      const at = verifiedAt.get(key);
      if (at === undefined) return false;
      if (fresh(at)) return true;
      verifiedAt.delete(key);
      return false;
    },
    remember(key) {
      verifiedAt.delete(key);
      verifiedAt.set(key, clock.now());
      if (verifiedAt.size <= MAX_ENTRIES) return;
      for (const [k, at] of verifiedAt) if (!fresh(at)) verifiedAt.delete(k);
      while (verifiedAt.size > MAX_ENTRIES) verifiedAt.delete(verifiedAt.keys().next().value!);
    },
  };
}
