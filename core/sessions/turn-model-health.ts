/**
 * What a session's model calls through the llm-endpoint sidecar say about its current turn. The
 * runtime notes every call the sidecar reports for the session (runtime.ts `noteModelCall`); the
 * turn loop opens and closes the turn (live-session.ts). Two rules read it:
 * - at the turn's end, a turn that made calls and had none succeed is an error (`end`), whatever
 *   stop reason the agent gave (an agent whose every call failed may still say `end_turn`);
 * - while the turn runs, calls that have all failed for the stall threshold stall it (`failing`),
 *   however busy the agent looks (one retrying a dead upstream keeps sending "Reconnecting…").
 * A session with no calls through the sidecar is never judged. Times are the runtime's clock at
 * each report.
 */

/** The fields of a call record (core/llm-endpoint/protocol.ts CallRecord) that say how it went. */
export interface CallOutcome {
  status: number;
  /** Why it failed, in words, as the sidecar says it (never a body or a key). */
  error?: string;
}

const REASON_MAX = 300;

/**
 * A call failed when its status is 400 or more: the upstream's error, the sidecar's refusal, an
 * upstream unreachable or timed out (502, 504), or the client gone before any answer (499). A call
 * whose answer began (2xx) and was then cut by the client is neither: the agent chose to stop it.
 */
export function outcomeOf(call: CallOutcome): "ok" | "failed" | "cut" {
  if (call.status >= 400) return "failed";
  return call.error === undefined ? "ok" : "cut";
}

/** A failed call in words: its status and the sidecar's message. */
export function failureReason(call: CallOutcome): string {
  const text = call.error ? `status ${call.status}: ${call.error}` : `status ${call.status}`;
  return text.length > REASON_MAX ? text.slice(0, REASON_MAX) + "…" : text;
}

export class TurnModelHealth {
  /** The session's calls go through the sidecar (its access was opened at launch). */
  proxied = false;
  private turn: { ok: number; failed: number } | undefined;
  /** The first failed call since the turn began or a call last succeeded. */
  private failingSince: number | undefined;
  private lastFailureAt: number | undefined;
  private lastReason: string | undefined;

  /** A turn begins: its counts start at 0. */
  begin(): void {
    this.turn = { ok: 0, failed: 0 };
    this.failingSince = this.lastFailureAt = this.lastReason = undefined;
  }

  /** A call of the session ended; outside a turn it is not counted. Returns how it went. */
  note(call: CallOutcome, now: number): "ok" | "failed" | "cut" {
    const outcome = outcomeOf(call);
    if (!this.turn) return outcome;
    if (outcome === "ok") {
      this.turn.ok++;
      this.failingSince = undefined;
    } else if (outcome === "failed") {
      this.turn.failed++;
      this.failingSince ??= now;
      this.lastFailureAt = now;
      this.lastReason = failureReason(call);
    }
    return outcome;
  }

  /**
   * The turn ended: the error it ends with when it made calls and none succeeded, else undefined.
   * A cancelled turn is not judged (its calls were cut on request).
   */
  end(stopReason: string | undefined): string | undefined {
    const t = this.turn;
    this.turn = undefined;
    this.failingSince = this.lastFailureAt = undefined;
    if (!t || t.ok > 0 || t.failed === 0 || stopReason === "cancelled") return undefined;
    return `every model call of this turn failed (${t.failed} ${t.failed === 1 ? "call" : "calls"}): ${this.lastReason}`;
  }

  /**
   * Every call has failed for at least `thresholdMs` with at least one failure within it: since
   * when, and why. Undefined outside a turn, when a call succeeded since, or when it is too soon.
   */
  failing(now: number, thresholdMs: number): { sinceMs: number; reason: string } | undefined {
    if (!this.turn || this.failingSince === undefined || this.lastFailureAt === undefined) return undefined;
    if (now - this.failingSince < thresholdMs || now - this.lastFailureAt > thresholdMs) return undefined;
    const secs = Math.round((now - this.failingSince) / 1000);
    return { sinceMs: this.failingSince, reason: `model calls failing for ${secs}s: ${this.lastReason}` };
  }
}
