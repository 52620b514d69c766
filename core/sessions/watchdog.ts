import type { LiveSession, PendingPrompt } from "./live-session.js";

/** SPEC.md: the message a stalled turn gets when nothing at all came since its prompt. */
export const NO_OUTPUT_MESSAGE = "no output has arrived since the prompt; the provider may be retrying";

/**
 * The turn-liveness rule (SPEC.md "Session watchdog"): a busy agent session with no adapter
 * activity for longer than `thresholdMs` gets `stalledSinceMs` (the time of its last activity),
 * and `lastTurnErrorMessage` when the turn produced nothing since its prompt. Detection only:
 * nothing is killed. A threshold of 0 or less disables it. Returns true when newly stalled.
 */
export function checkStall(s: LiveSession, now: number, thresholdMs: number): boolean {
  if (!(thresholdMs > 0)) return false;
  if (s.fixed.kind !== "agent" || s.state !== "busy" || s.stalledSinceMs !== undefined) return false;
  if (now - s.lastActivityAt <= thresholdMs) return false;
  s.stalledSinceMs = s.lastActivityAt;
  if (!s.turnHadOutput) s.lastTurnErrorMessage = NO_OUTPUT_MESSAGE;
  return true;
}

/**
 * The model-call rule: a busy agent session whose model calls through the llm-endpoint sidecar
 * have all failed for at least `thresholdMs` (with one failing within it) is stalled however many
 * updates its agent sends (one retrying a dead upstream keeps saying "Reconnecting…"):
 * `stalledSinceMs` is the first failure since the last success, `lastTurnErrorMessage` says why. Activity does
 * not clear it; a successful call or the turn's end does. Returns true when newly stalled.
 */
export function checkModelStall(s: LiveSession, now: number, thresholdMs: number): boolean {
  if (!(thresholdMs > 0)) return false;
  if (s.fixed.kind !== "agent" || s.state !== "busy" || s.stalledSinceMs !== undefined) return false;
  const failing = s.modelHealth.failing(now, thresholdMs);
  if (!failing) return false;
  s.stalledSinceMs = failing.sinceMs;
  s.stalledByModelCalls = true;
  s.lastTurnErrorMessage = failing.reason;
  return true;
}

/** Queued prompts that just crossed the stale age (each is reported once). */
export function stalePrompts(s: LiveSession, now: number, staleMs: number): PendingPrompt[] {
  if (!s.live || !(staleMs > 0)) return [];
  return s.queue.filter((p) => !p.staleNotified && now - p.enqueuedAt >= staleMs);
}
