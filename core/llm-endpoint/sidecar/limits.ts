/**
 * The limits a call must be under to start: tokens per session, per run and per UTC day (counted
 * when calls end: a call that starts under a line may end past it), calls per session in any 60 s,
 * and calls in flight per session. Counters start from what the daemon says was used before
 * (`grant.used`, `configure.day`).
 */
import { utcDay, type BudgetSpec, type RefusalReason } from "../protocol.js";

export interface Refusal {
  reason: RefusalReason;
  status: 403 | 429;
  message: string;
  /** Seconds, for 429. */
  retryAfter?: number;
  /** The budget key, e.g. sessionTokens (budget refusals). */
  budget?: "sessionTokens" | "runTokens" | "dayTokens";
}

const WINDOW_MS = 60_000;

interface SessionCounters {
  tokens: number;
  inFlight: number;
  /** Start times (ms, monotonic) of the calls admitted in the last 60 s, oldest first. */
  starts: number[];
}

export class Limits {
  budgets: BudgetSpec = {};
  private readonly sessions = new Map<string, SessionCounters>();
  private readonly runs = new Map<string, number>();
  private day = { date: "", tokens: 0 };

  configure(budgets: BudgetSpec, day: { date: string; tokens: number }): void {
    this.budgets = budgets;
    this.day = { ...day };
  }

  /** A grant's totals so far: never lowers what this process has counted itself. */
  seed(sessionId: string, runId: string | undefined, used: { sessionTokens: number; runTokens: number }): void {
    const s = this.session(sessionId);
    s.tokens = Math.max(s.tokens, used.sessionTokens);
    if (runId !== undefined) this.runs.set(runId, Math.max(this.runs.get(runId) ?? 0, used.runTokens));
  }

  forget(sessionId: string): void {
    if (this.sessions.get(sessionId)?.inFlight === 0) this.sessions.delete(sessionId);
  }

  /** Admits a call (counting its start and its place in flight) or says why not. `now`: monotonic ms. */
  admit(sessionId: string, runId: string | undefined, now: number, wallMs: number): Refusal | null {
    const b = this.budgets;
    const s = this.session(sessionId);
    if (b.sessionTokens !== undefined && s.tokens >= b.sessionTokens)
      return budget("sessionTokens", "session-budget", "this session", s.tokens, b.sessionTokens);
    if (b.runTokens !== undefined && runId !== undefined) {
      const used = this.runs.get(runId) ?? 0;
      if (used >= b.runTokens) return budget("runTokens", "run-budget", `swarm run ${runId}`, used, b.runTokens);
    }
    if (b.dayTokens !== undefined) {
      const used = this.dayTokens(wallMs);
      if (used >= b.dayTokens)
        return budget("dayTokens", "day-budget", `today (UTC ${this.day.date})`, used, b.dayTokens);
    }
    if (b.requestsPerMinute !== undefined) {
      while (s.starts.length > 0 && s.starts[0]! <= now - WINDOW_MS) s.starts.shift();
      if (s.starts.length >= b.requestsPerMinute) {
        const retryAfter = Math.max(1, Math.ceil((s.starts[0]! + WINDOW_MS - now) / 1000));
        return {
          reason: "rate",
          status: 429,
          retryAfter,
          message: `llm-endpoint rate limit: this session started ${s.starts.length} calls in the last 60 s, the limit (llmEndpoint.budgets.requestsPerMinute) is ${b.requestsPerMinute}; retry after ${retryAfter} s`,
        };
      }
    }
    if (b.concurrentCalls !== undefined && s.inFlight >= b.concurrentCalls) {
      return {
        reason: "concurrency",
        status: 429,
        retryAfter: 1,
        message: `llm-endpoint concurrency limit: this session has ${s.inFlight} calls in flight, the limit (llmEndpoint.budgets.concurrentCalls) is ${b.concurrentCalls}`,
      };
    }
    if (b.requestsPerMinute !== undefined) s.starts.push(now);
    s.inFlight++;
    return null;
  }

  /** An admitted call ended, having used `tokens`. */
  done(sessionId: string, runId: string | undefined, tokens: number, wallMs: number): void {
    const s = this.session(sessionId);
    s.inFlight--;
    s.tokens += tokens;
    if (runId !== undefined) this.runs.set(runId, (this.runs.get(runId) ?? 0) + tokens);
    this.day.tokens = this.dayTokens(wallMs) + tokens;
  }

  get inFlight(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.inFlight;
    return n;
  }

  private dayTokens(wallMs: number): number {
    const today = utcDay(wallMs);
    if (today !== this.day.date) this.day = { date: today, tokens: 0 };
    return this.day.tokens;
  }

  private session(id: string): SessionCounters {
    let s = this.sessions.get(id);
    if (!s) this.sessions.set(id, (s = { tokens: 0, inFlight: 0, starts: [] }));
    return s;
  }
}

function budget(
  key: NonNullable<Refusal["budget"]>,
  reason: RefusalReason,
  whose: string,
  used: number,
  limit: number,
): Refusal {
  return {
    reason,
    status: 403,
    budget: key,
    message: `llm-endpoint token budget exhausted: ${whose} has used ${used} tokens, the limit (llmEndpoint.budgets.${key}) is ${limit}`,
  };
}
