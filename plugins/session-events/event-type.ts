/**
 * The MCP event type `session.lifecycle` (`events/list`): the daemon's session events, of every
 * session or of one (`session`), every type or some (`types`, globs such as `session.context-*`).
 */
import { defineEventType, eventArgumentError, TYPES_PER_CLAUSE_MAX, z } from "../../core/plugin-api/index.js";
import { SESSION_EVENT_TYPES, sessionSubject } from "./session-event.js";

const NAME = "session.lifecycle";
const TYPE_GLOB = /^session\.[a-z0-9*?{},|-]{1,60}$/;

const opt = <T extends z.ZodType>(t: T, d: string) => t.optional().describe(d);

/** Every field a session event's data may have (which ones depends on the type; docs/event-types.md). */
const payload = z
  .object({
    sessionId: z.string().describe("The session's id"),
    adapter: opt(z.string(), "started, resumed: the adapter it runs (e.g. claude-code)"),
    source: opt(z.string(), "started, resumed: where the adapter came from (built-in, catalog, config, terminal, ...)"),
    kind: opt(z.string(), "started: agent or terminal"),
    resumes: opt(z.number(), "resumed: how many times the session was resumed"),
    promptId: opt(z.string(), "turn-ended, prompt-stale, context-compact: the prompt concerned"),
    stopReason: opt(z.string(), "turn-ended: why the turn ended (end_turn, cancelled, error, ...)"),
    error: opt(z.string(), "turn-ended, context-continued: the error, if any"),
    exit: opt(
      z.object({
        code: z.number().nullable().describe("Exit code, or null"),
        signal: z.string().nullable().describe("Signal that ended it, or null"),
        error: opt(z.string(), "Why it could not run"),
      }),
      "ended: how the agent's process ended",
    ),
    stalledSinceMs: opt(z.number(), "stalled: epoch ms since which the turn made no progress"),
    lastTurnErrorMessage: opt(z.string(), "stalled: the last error the turn reported"),
    sender: opt(
      z.object({
        kind: z.string().describe("human, session, system, ..."),
        id: opt(z.string(), "The sending session's id"),
      }),
      "prompt-stale: who sent the prompt",
    ),
    enqueuedAt: opt(z.number(), "prompt-stale: epoch ms the prompt was queued"),
    profile: opt(z.string(), "handoff-suggested: the quota profile"),
    remaining: opt(z.number(), "handoff-suggested: quota remaining"),
    window: opt(
      z.union([z.string(), z.number()]),
      "handoff-suggested: the quota window; context-*: the model's context window in tokens",
    ),
    threshold: opt(
      z.union([z.string(), z.number()]),
      "handoff-suggested: the quota threshold; context-*: the context threshold crossed",
    ),
    model: opt(z.string(), "context-*: the model; verdict: the judge model"),
    inputTokens: opt(z.number(), "context-*: input tokens of the latest model call"),
    pct: opt(z.number(), "context-*: percent of the window used"),
    atPct: opt(z.number(), "context-*: the threshold's percent"),
    alsoCrossed: opt(z.array(z.string()), "context-*: other thresholds crossed at once"),
    verdict: opt(z.string(), "verdict: on_track, stuck, needs_human, done or judge_error"),
    reason: opt(z.string(), "verdict: why; context-*: why an action was not taken"),
    suggestedPrompt: opt(z.string(), "verdict: a prompt the steward suggests"),
    trigger: opt(z.string(), "verdict: what asked for it (stalled, turn-ended, request, ...)"),
    at: opt(z.number(), "verdict: epoch ms of the verdict"),
    continuedAs: opt(z.string(), "context-continued: the session that continues it"),
  })
  .describe("The session event's data as the daemon emits it on /events (fields depend on the type)");

export const sessionLifecycleEventType = defineEventType({
  name: NAME,
  description:
    "Lifecycle events of svc's agent sessions: started, resumed, turn ended, stalled, prompt stale, handoff suggested, context thresholds crossed, steward verdict, ended. Type session.<what>; subject session:<id>. Of every session, or of one.",
  arguments: z.strictObject({
    session: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,80}$/, "must be a session id (1 to 80 letters, digits, _ and -)")
      .optional()
      .describe("A session id: only that session's events (default: every session's)"),
    types: z
      .array(
        z
          .string()
          .regex(
            TYPE_GLOB,
            `must be a session event type or glob, e.g. session.ended or session.context-*; known: ${SESSION_EVENT_TYPES.join(", ")}`,
          ),
      )
      .min(1, "give at least one type, or omit types for every one")
      .max(TYPES_PER_CLAUSE_MAX, `at most ${TYPES_PER_CLAUSE_MAX} types`)
      .optional()
      .describe(`Only these types, or globs (default: every one). Known: ${SESSION_EVENT_TYPES.join(", ")}`),
  }),
  payload,
  match(a) {
    if (a.types && new Set(a.types).size !== a.types.length)
      throw eventArgumentError(NAME, "types", "must not repeat a type");
    return [{ subject: a.session ? sessionSubject(a.session) : "session:*", types: a.types ?? ["session.*"] }];
  },
});
