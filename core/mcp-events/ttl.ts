/**
 * A webhook subscription's lifetime (the sketch's "Subscription TTL"): the client suggests
 * `ttlMs`, svc grants `refreshBefore`. Omitted: the default; a finite suggestion is clamped to
 * [minimum, maximum] (clamping up only to the floor, as the sketch allows); `null` asks for no
 * expiry and is granted (the subscription is persisted and outlives restarts).
 */
import { MCP_EVENTS_LIMITS as L } from "./limits.js";
import { invalidParams } from "./rpc-errors.js";

/** The granted expiry (epoch ms), or null for none. Throws -32602 `invalid_ttl` for a value that is no duration. */
export function grantExpiry(ttlMs: unknown, now: number): number | null {
  if (ttlMs === undefined) return now + L.ttlDefaultMs;
  if (ttlMs === null) return null;
  if (typeof ttlMs !== "number" || !Number.isInteger(ttlMs) || ttlMs < 0) {
    throw invalidParams(
      "invalid_ttl",
      `ttlMs must be a non-negative integer of milliseconds (granted between ${L.ttlMinMs} and ${L.ttlMaxMs}), null for no expiry, or omitted for ${L.ttlDefaultMs}`,
    );
  }
  return now + Math.min(L.ttlMaxMs, Math.max(L.ttlMinMs, ttlMs));
}
