/**
 * The session contract between the session runtime (core/sessions) and the adapter plugins that
 * start sessions (ACP agents, terminal presets, `@svc/adapter-<slug>` packages), plus the
 * "sessions" host service that targets (the session target) deliver into.
 */

export type SpawnOptionValue = boolean | number | string;

/** Billing auth resolved from `defaults.adapters.<slug>.auth`. Never written to a transcript. */
export interface SpawnAuth {
  mode?: "subscription" | "api-key";
  token?: string;
  apiKey?: string;
  provider?: string;
}

/** What the runtime asks an adapter to start (defaults already merged). */
export interface SessionStartSpec {
  sessionId: string;
  /** The adapter slug the caller asked for (e.g. `gemini`, `my-agent`, `terminal`). */
  adapter: string;
  /** Absolute working directory. */
  cwd: string;
  options: Record<string, SpawnOptionValue>;
  skills: string[];
  auth?: SpawnAuth;
  /** Terminal sessions: the command and extra environment over the daemon's. */
  argv?: string[];
  env?: Record<string, string>;
  name?: string;
  /** Directories to put first on the session process's PATH (the provenance shim). */
  pathPrepend?: string[];
}

/**
 * What the runtime asks an adapter to resume: the session's start spec again (its id, cwd, options
 * and skills kept; the session token and auth resolved anew) and the id the agent gave the session
 * when it started ({@link AdapterSession.agentSessionId}).
 */
export interface SessionResumeSpec extends SessionStartSpec {
  agentSessionId: string;
}

/** Where an adapter reports what its session does. Every call counts as adapter activity. */
export interface SessionUpdateSink {
  /** One agent update (for ACP: the `sessionUpdate` kind and the update object). */
  update(kind: string, data?: unknown): void;
  /** Raw terminal output. */
  output(stream: "stdout" | "stderr" | "pty", text: string): void;
  /** The access profile's remaining quota (`window` identifies the quota window). */
  quota(report: { profile: string; remaining: number; window: string }): void;
  /** The session's process ended. */
  exited(info: { code: number | null; signal: string | null; error?: string }): void;
}

export interface TurnOutcome {
  /** ACP stop reason: `end_turn`, `cancelled`, `max_tokens`, `refusal`, … */
  stopReason: string;
}

/** A started session as the adapter hands it to the runtime. */
export interface AdapterSession {
  readonly kind: "agent" | "terminal";
  readonly pid?: number;
  /** Public facts for listings (agent name and version, transport, …). Never a secret. */
  readonly info?: Record<string, unknown>;
  /**
   * The agent's own id for this session (ACP: the `sessionId` of `session/new`), kept in the
   * session's record so that {@link AdapterInstance.resume} can hand it back. Never a secret.
   */
  readonly agentSessionId?: string;
  /** Runs one turn (agents). */
  prompt?(text: string): Promise<TurnOutcome>;
  /** Cancels the in-flight turn (agents); the pending `prompt` then resolves `cancelled`. */
  cancel?(): Promise<void>;
  /**
   * The prompt that asks the agent to compact its context (for an ACP agent that advertised a
   * `compact` command: `/compact`), or undefined while it cannot. Optional: without it the
   * session cannot compact. The runtime runs it as a system prompt through the session's queue
   * (contextContinuity.compactAtPct), so a compaction never overlaps another turn.
   */
  compactCommand?(): string | undefined;
  /** Writes to the session's input (terminals). */
  write?(data: string): void;
  /** Ends the session and its process. */
  stop(): Promise<void>;
}

/**
 * What an adapter plugin's `setup` returns: the one contract the session runtime (core/sessions)
 * calls to start sessions (ACP agents, terminal presets, `@svc/adapter-<slug>` packages).
 *
 * A package adapter serves the slug equal to its `kind`: `svc sessions start --adapter <kind>`
 * starts it, ahead of a config `acpAgents` entry or catalog entry of the same slug.
 */
export interface AdapterInstance {
  /**
   * Starts one session. Report what it does through `sink` (every call counts as activity) and
   * call `sink.exited` when it ends, including after {@link AdapterSession.stop}.
   */
  start(spec: SessionStartSpec, sink: SessionUpdateSink): Promise<AdapterSession>;
  /** Adapter slugs this plugin can start (a dynamic adapter, like ACP, serves many). */
  slugs?(): string[] | Promise<string[]>;
  /** A dynamic adapter (ACP) says where its recipe for `slug` comes from, or undefined when it has none. */
  sourceOf?(slug: string): "config" | "catalog" | undefined;
  /**
   * Why sessions of `slug` cannot be resumed (e.g. "set acpAgents.<slug>.resumable: true"), or
   * undefined when they can, as far as the adapter knows before starting a process. Optional.
   */
  notResumable?(slug: string): string | undefined;
  /**
   * Optional: starts the agent again for a session that ended (or whose daemon died) and has it
   * load its conversation (`spec.agentSessionId`), as `start` does otherwise. History the agent
   * replays while loading is not reported to `sink` (the transcript already has it). Throws an
   * SvcError `not_resumable` when the agent cannot load sessions. Without it, no session of this
   * adapter can be resumed.
   */
  resume?(spec: SessionResumeSpec, sink: SessionUpdateSink): Promise<AdapterSession>;
}

/** An adapter plugin that starts sessions: the same type as {@link AdapterInstance}, under the session runtime's name. */
export type SessionAdapterInstance = AdapterInstance;

export type PromptUrgency = "queue" | "steer" | "interrupt";

export interface PromptSender {
  kind: "human" | "session" | "sentinel" | "system";
  /** Session id, sentinel id or principal. */
  id?: string;
}

export interface PromptReceipt {
  promptId: string;
  sessionId: string;
  /** `started`: ran at once; `queued`/`steered`: waits behind the turn; `interrupted`: cut the turn. */
  /** `parked`: the session takes no prompts (a context hard stop), so a sentinel's event was parked instead (see `parked`). */
  delivery: "started" | "queued" | "steered" | "interrupted" | "parked";
  /** The urgency asked for, when policy changed it (e.g. a denied interrupt delivered as steer). */
  requested?: PromptUrgency;
  /** Why the urgency changed. */
  note?: string;
  position: number;
}

/** The sentinel event a delivered prompt carries. */
export interface DeliveryRef {
  sentinelId: string;
  eventId: string;
}

/** An event kept for a session that has ended (the session target parks instead of dropping). */
export interface ParkedDelivery {
  sentinelId: string;
  eventId: string;
  text: string;
  parkedAt: number;
  reason: string;
}

/** The host service "sessions": what targets and other plugins may do with live sessions. */
export interface SessionHost {
  /** `live`: accepting prompts; `ended`: gone; `unknown`: never existed here. */
  state(sessionId: string): "live" | "ended" | "unknown";
  /**
   * Prompts a live session under the messaging policy. With `ref`, a prompt still queued when the
   * session ends is parked (not lost).
   */
  deliver(
    sessionId: string,
    text: string,
    opts: { sender: PromptSender; urgency: PromptUrgency; ref?: DeliveryRef },
  ): Promise<PromptReceipt>;
  park(sessionId: string, entry: ParkedDelivery): Promise<void>;
  parked(sessionId: string, sentinelId?: string): Promise<ParkedDelivery[]>;
}

/** `env` with `dirs` first on its PATH (the session's {@link SessionStartSpec.pathPrepend}). */
export function prependPath(
  env: Record<string, string | undefined>,
  dirs: readonly string[] | undefined,
): Record<string, string | undefined> {
  if (!dirs?.length) return env;
  return { ...env, PATH: [...dirs, ...(env.PATH ? [env.PATH] : [])].join(":") };
}
