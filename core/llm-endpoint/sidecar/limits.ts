/**
 * The limits a call must be under to start: tokens per session, per run and per UTC day, calls per
 * session in any 60 s, and calls in flight per session. A token budget holds what ended calls used
 * and what calls in flight reserve (reservation.ts): a call is admitted only when used + reserved +
 * its own reservation stays within each line, its reservation is held while it runs, and when it
 * ends the reservation is released and what it really used is counted (settle). Counters start
 * from what the daemon says was used before (`grant.used`, `configure.day`) and never go down
 * (the day's starts from zero on a new UTC date).
 */
import { utcDay, type BudgetSpec, type RefusalReason } from "../protocol.js";
import { reservedTokens, type Reservation } from "./reservation.js";

export interface Refusal {
  reason: RefusalReason;
  status: 403 | 429;
  message: string;
  /** Seconds, for 429. */
  retryAfter?: number;
  /** The budget key, e.g. sessionTokens (budget refusals). */
  budget?: "sessionTokens" | "runTokens" | "dayTokens";
}

/** An admitted call's place in the counters, until it is settled. */
export interface Ticket {
  readonly tokens: number;
  settled: boolean;
  readonly session: SessionCounters;
  readonly run: TokenCounter | undefined;
}

const WINDOW_MS = 60_000;

/** Tokens of ended calls, and tokens reserved by calls in flight. */
interface TokenCounter {
  used: number;
  reserved: number;
}

interface SessionCounters extends TokenCounter {
  inFlight: number;
  /** Start times (ms, monotonic) of the calls admitted in the last 60 s, oldest first. */
  starts: number[];
}

export class Limits {
  budgets: BudgetSpec = {};
  private readonly sessions = new Map<string, SessionCounters>();
  private readonly runs = new Map<string, TokenCounter>();
  /** Calls in flight at midnight keep their reservation in the new day, where they are counted. */
  private readonly day: TokenCounter & { date: string } = { date: "", used: 0, reserved: 0 };

  configure(budgets: BudgetSpec, day: { date: string; tokens: number }): void {
    this.budgets = budgets;
    if (day.date === this.day.date) this.day.used = Math.max(this.day.used, day.tokens);
    else {
      this.day.date = day.date;
      this.day.used = day.tokens;
    }
  }

  /** A grant's totals so far: never lowers what this process has counted itself. */
  seed(sessionId: string, runId: string | undefined, used: { sessionTokens: number; runTokens: number }): void {
    const s = this.session(sessionId);
    s.used = Math.max(s.used, used.sessionTokens);
    if (runId !== undefined) {
      const r = this.run(runId);
      r.used = Math.max(r.used, used.runTokens);
    }
  }

  forget(sessionId: string): void {
    if (this.sessions.get(sessionId)?.inFlight === 0) this.sessions.delete(sessionId);
  }

  /**
   * Admits a call (reserving its tokens, counting its start and its place in flight) or says why
   * not. `now`: monotonic ms.
   */
  admit(
    sessionId: string,
    runId: string | undefined,
    now: number,
    wallMs: number,
    reservation: Reservation,
  ): Refusal | Ticket {
    const b = this.budgets;
    const s = this.session(sessionId);
    const run = runId !== undefined ? this.run(runId) : undefined;
    const day = this.today(wallMs);
    const r = reservation;
    if (b.sessionTokens !== undefined && over(s, r, b.sessionTokens))
      return budget("sessionTokens", "session-budget", "this session", s, r, b.sessionTokens);
    if (b.runTokens !== undefined && run && over(run, r, b.runTokens))
      return budget("runTokens", "run-budget", `swarm run ${runId}`, run, r, b.runTokens);
    if (b.dayTokens !== undefined && over(day, r, b.dayTokens))
      return budget("dayTokens", "day-budget", `today (UTC ${day.date})`, day, r, b.dayTokens);
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
    const tokens = reservedTokens(r);
    for (const c of [s, run, day]) if (c) c.reserved += tokens;
    return { tokens, settled: false, session: s, run };
  }

  /** An admitted call ended, having used `tokens`: its reservation is released and its use counted. Once per ticket. */
  settle(t: Ticket, tokens: number, wallMs: number): void {
    if (t.settled) return;
    t.settled = true;
    t.session.inFlight--;
    for (const c of [t.session, t.run, this.today(wallMs)]) {
      if (!c) continue;
      c.reserved -= t.tokens;
      c.used += tokens;
    }
  }

  get inFlight(): number {
    let n = 0;
    for (const s of this.sessions.values()) n += s.inFlight;
    return n;
  }

  private today(wallMs: number): TokenCounter & { date: string } {
    const today = utcDay(wallMs);
    if (today !== this.day.date) {
      this.day.date = today;
      this.day.used = 0;
    }
    return this.day;
  }

  private session(id: string): SessionCounters {
    let s = this.sessions.get(id);
    if (!s) this.sessions.set(id, (s = { used: 0, reserved: 0, inFlight: 0, starts: [] }));
    return s;
  }

  private run(id: string): TokenCounter {
    let r = this.runs.get(id);
    if (!r) this.runs.set(id, (r = { used: 0, reserved: 0 }));
    return r;
  }
}

export const isRefusal = (a: Refusal | Ticket): a is Refusal => "reason" in a;

/** Past the line: used + reserved + this call's reservation over the limit, or (a call reserving nothing) nothing left. */
function over(c: TokenCounter, r: Reservation, limit: number): boolean {
  return c.used >= limit || c.used + c.reserved + reservedTokens(r) > limit;
}

function budget(
  key: NonNullable<Refusal["budget"]>,
  reason: RefusalReason,
  whose: string,
  c: TokenCounter,
  r: Reservation,
  limit: number,
): Refusal {
  const setting = `llmEndpoint.budgets.${key}`;
  let message: string;
  if (c.used >= limit) {
    const inFlight = c.reserved > 0 ? `; calls in flight reserve ${c.reserved} more` : "";
    message = `llm-endpoint token budget exhausted: ${whose} has used ${c.used} tokens, the limit (${setting}) is ${limit}${inFlight}`;
  } else {
    const tokens = reservedTokens(r);
    const room = limit - c.used - r.input;
    const fix =
      c.used + tokens <= limit
        ? "retry once calls in flight have ended"
        : room >= 1
          ? `it fits with an output cap of at most ${room} tokens`
          : "the budget has no room left for a call this size";
    const sum = c.used + c.reserved + tokens;
    message = `llm-endpoint token budget: this call would pass the limit (${setting}) of ${limit}: ${whose} has used ${c.used} tokens, calls in flight reserve ${c.reserved}, and this call reserves ${tokens} (${r.input} input, estimated from the request's size, + ${r.output} output, from ${r.outputFrom}): ${c.used} + ${c.reserved} + ${tokens} = ${sum} > ${limit}; ${fix}`;
  }
  return { reason, status: 403, budget: key, message };
}
