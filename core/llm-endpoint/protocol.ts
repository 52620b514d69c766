/**
 * The messages between the daemon (the supervisor, core/llm-endpoint/supervisor.ts) and the
 * llm-endpoint sidecar (a child process forked with an IPC channel, core/llm-endpoint/sidecar/).
 *
 * The daemon owns every decision that outlives a call: which routes exist and which key each
 * injects (keys travel only over this channel: never argv, env or a file the child reads), which
 * session tokens are valid, and the usage counted so far (from the usage log). The sidecar owns the
 * calls: it checks a call's token and limits, forwards it, and reports it once it ends. After a
 * restart the daemon sends `configure` and every live `grant` again, with the totals so far.
 */

/** The UTC day of an ISO time or epoch ms, as YYYY-MM-DD: the day budgets and the usage log count by. */
export function utcDay(at: string | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/**
 * The providers whose APIs the sidecar speaks (anthropic: Messages; openai: Chat Completions and
 * Responses; gemini: generateContent); a route's provider names which one its upstream speaks.
 */
export type LlmProvider = "anthropic" | "openai" | "gemini";

/** A route: where a call goes and what it carries. */
export interface RouteSpec {
  name: string;
  provider: LlmProvider;
  /**
   * anthropic and gemini: without a version (the sidecar appends the request path, /v1/… or
   * /v1beta/…); openai: with /v1 (the sidecar appends the path after /v1).
   */
  baseUrl: string;
  /** Model ids served here; a trailing `*` matches a prefix. */
  models: string[];
  /**
   * The credential injected upstream: an API key (anthropic: `x-api-key`; openai: bearer; gemini:
   * `x-goog-api-key`) or a token (bearer, all). Absent: the route has no key, and a call to it is refused (401, in the API's shape).
   */
  key?: { kind: "apiKey" | "token"; value: string; from: string };
  /**
   * The adapter slug whose `defaults.adapters.<slug>.auth` supplies the key (config `keyFrom`), named
   * in the refusal of a route with no key; absent: the provider's catalog adapter (claude, codex, gemini).
   */
  keyFrom?: string;
}

/** A model role (config `models`), resolved: a request may name it as `role:<name>` or `<name>`. */
export interface RoleSpec {
  role: string;
  model: string;
  route?: string;
  /** The key for this role's calls, when the role's `profile` names one (over the route's). */
  key?: RouteSpec["key"];
}

export interface BudgetSpec {
  sessionTokens?: number;
  runTokens?: number;
  dayTokens?: number;
  requestsPerMinute?: number;
  concurrentCalls?: number;
}

export type ParentMessage =
  | {
      type: "configure";
      routes: RouteSpec[];
      roles: RoleSpec[];
      budgets: BudgetSpec;
      upstreamTimeoutMs: number;
      /** Tokens used today (UTC) before this message, and which day that is (YYYY-MM-DD). */
      day: { date: string; tokens: number };
    }
  /** Binds the port (loopback); answered by `listening` or `listen-failed`. Sent once, after the first `configure`. */
  | { type: "listen"; port: number }
  /** A session's bearer token is valid from now on; `used` are the totals so far (after a restart). */
  | {
      type: "grant";
      token: string;
      sessionId: string;
      runId?: string;
      used: { sessionTokens: number; runTokens: number };
    }
  /** The token stops working at once (its session ended). */
  | { type: "revoke"; token: string }
  /** Every call of this session is refused from now on (context hard stop), with the reason given. */
  | { type: "block"; sessionId: string; reason: string }
  /** Asks for a `stats` answer (status, bench). */
  | { type: "stats"; id: number };

export interface CallRecord {
  /** ISO time the call started. */
  at: string;
  sessionId: string;
  runId?: string;
  api: LlmProvider;
  /** The request path without its query, e.g. /v1/messages, /v1beta/models/gemini-2.5-pro:generateContent. */
  path: string;
  route: string;
  /** The model id sent upstream (after a role resolved), and the name the client asked for when it differed. */
  model: string;
  requested?: string;
  stream: boolean;
  /** The status the client got (an upstream's own, or the sidecar's 4xx/5xx). */
  status: number;
  /** From the upstream's usage fields; anthropic input counts cache reads and writes. */
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  /**
   * Tokens counted against the budgets in place of usage never reported: the call's reservation,
   * when the client went away before any usage reached it (the upstream may have spent it).
   */
  estimatedTokens?: number;
  /** Streaming: ms from the call's start to the first byte sent to the client. */
  firstByteMs?: number;
  /** Why the call failed, in words (never a body): upstream timeout, reset, client gone, … */
  error?: string;
}

export type RefusalReason =
  | "session-budget"
  | "run-budget"
  | "day-budget"
  | "rate"
  | "concurrency"
  | "blocked"
  | "no-key";

export type ChildMessage =
  | { type: "listening"; port: number; pid: number }
  | { type: "listen-failed"; port: number; code: string; message: string }
  /** One call ended (whatever its outcome, refusals included). */
  | { type: "call"; record: CallRecord }
  /** A call was refused by a limit; the daemon tells the session's transcript. */
  | { type: "refused"; sessionId: string; runId?: string; reason: RefusalReason; status: number; message: string }
  | { type: "stats"; id: number; inFlight: number; calls: number; rssBytes: number };
