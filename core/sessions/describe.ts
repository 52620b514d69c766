import type { LiveSession } from "./live-session.js";
import type { SessionActivity, SessionDescriptor } from "./types.js";

const ATTENTION_STOPS = new Set(["max_tokens", "max_turn_requests", "refusal", "error"]);

/**
 * The public view of a session. `activity` follows `sessions.attentionDelaySec`: a session is
 * `running` while a turn is in flight and for the delay after its last turn ends, then settles
 * into `attention` (the last turn failed, stalled or stopped short, or the process died) or
 * `quiet`. An ended session settles the same way and then shows `ended`.
 */
export function describeSession(
  s: LiveSession,
  now: number,
  policy: { attentionDelayMs: number; staleMs: number },
): SessionDescriptor {
  const f = s.fixed;
  return {
    ...f,
    state: s.state,
    activity: activityOf(s, now, policy.attentionDelayMs),
    ...(s.endedAt !== undefined ? { endedAt: s.endedAt } : {}),
    ...(s.exit ? { exit: s.exit } : {}),
    ...(s.handle?.pid !== undefined ? { pid: s.handle.pid } : {}),
    ...(s.handle?.info ? { info: s.handle.info } : {}),
    turns: s.turns,
    lastActivityAt: s.lastActivityAt,
    ...(s.lastTurnEndedAt !== undefined ? { lastTurnEndedAt: s.lastTurnEndedAt } : {}),
    ...(s.lastStopReason ? { lastStopReason: s.lastStopReason } : {}),
    ...(s.lastTurnErrorMessage ? { lastTurnErrorMessage: s.lastTurnErrorMessage } : {}),
    ...(s.stalledSinceMs !== undefined ? { stalledSinceMs: s.stalledSinceMs } : {}),
    ...(s.modelUsage ? { modelUsage: { ...s.modelUsage } } : {}),
    ...(s.context ? { context: s.context } : {}),
    ...(s.continuedFrom ? { continuedFrom: s.continuedFrom } : {}),
    ...(s.continuedAs ? { continuedAs: s.continuedAs } : {}),
    ...(s.refusal ? { refusal: s.refusal } : {}),
    ...(s.verdict ? { verdict: s.verdict } : {}),
    pendingPrompts: s.queue.map((p) => ({
      promptId: p.promptId,
      sender: p.sender,
      urgency: p.urgency,
      enqueuedAt: p.enqueuedAt,
      ageMs: now - p.enqueuedAt,
      stale: policy.staleMs > 0 && now - p.enqueuedAt >= policy.staleMs,
      preview: p.text.length > 80 ? p.text.slice(0, 80) + "…" : p.text,
    })),
  };
}

function activityOf(s: LiveSession, now: number, delayMs: number): SessionActivity {
  if (s.busy) return "running";
  const settledFrom = s.endedAt ?? s.lastTurnEndedAt ?? s.fixed.createdAt;
  if (now - settledFrom < delayMs) return "running";
  if (s.state === "ended" && s.exit?.error === "stopped") return "ended";
  const needsAttention =
    (s.state === "ended" && (s.exit?.code !== 0 || s.exit?.error !== undefined)) ||
    s.lastTurnErrorMessage !== undefined ||
    s.stalledSinceMs !== undefined ||
    (s.lastStopReason !== undefined && ATTENTION_STOPS.has(s.lastStopReason));
  if (needsAttention) return "attention";
  return s.state === "ended" ? "ended" : "quiet";
}
