/** Rate-limit recognition and backoff for GitHub API answers (primary and secondary limits). */
import type { GhResponse } from "../github-common/index.js";

const MAX_BACKOFF_MS = 15 * 60_000;

/** True when the answer is GitHub refusing for rate limiting (429, or 403 with an exhausted or retry-after limit). */
export function isRateLimited(res: GhResponse): boolean {
  if (res.status === 429) return true;
  if (res.status !== 403) return false;
  return res.headers["x-ratelimit-remaining"] === "0" || res.headers["retry-after"] !== undefined;
}

/**
 * How long to wait before the next request: `retry-after` seconds, else until `x-ratelimit-reset`
 * (epoch seconds), else exponential from the poll interval; never more than 15 minutes.
 */
export function backoffMs(res: GhResponse, now: number, intervalMs: number, failures: number): number {
  const retryAfter = Number(res.headers["retry-after"]);
  if (Number.isFinite(retryAfter) && retryAfter > 0) return Math.min(retryAfter * 1000, MAX_BACKOFF_MS);
  const reset = Number(res.headers["x-ratelimit-reset"]);
  if (res.headers["x-ratelimit-remaining"] === "0" && Number.isFinite(reset) && reset * 1000 > now) {
    return Math.min(reset * 1000 - now + 1000, MAX_BACKOFF_MS);
  }
  return Math.min(intervalMs * 2 ** Math.max(0, failures - 1), MAX_BACKOFF_MS);
}
