import type { PromptSender, PromptUrgency, SpawnOptionValue } from "../plugin-api/sessions.js";
import type { ModelUsage } from "./model-access.js";

export type SessionState = "starting" | "idle" | "busy" | "ended";

/** How a listing shows a session: `running` until `sessions.attentionDelaySec` after its last turn. */
export type SessionActivity = "running" | "attention" | "quiet" | "ended";

/** Where the adapter for a slug came from (SPEC.md acpAgents: package, then config, then catalog). */
export type AdapterSource = "package" | "config" | "catalog" | "terminal";

export interface PendingPromptView {
  promptId: string;
  sender: PromptSender;
  urgency: PromptUrgency;
  enqueuedAt: number;
  ageMs: number;
  stale: boolean;
  preview: string;
}

/** A session as listings, responses and tools show it. Never carries a secret. */
export interface SessionDescriptor {
  id: string;
  adapter: string;
  source: AdapterSource;
  kind: "agent" | "terminal";
  state: SessionState;
  activity: SessionActivity;
  label?: string;
  name?: string;
  cwd: string;
  parentId?: string;
  depth: number;
  role: string;
  createdAt: number;
  endedAt?: number;
  exit?: { code: number | null; signal: string | null; error?: string };
  pid?: number;
  turns: number;
  lastActivityAt: number;
  lastTurnEndedAt?: number;
  lastStopReason?: string;
  lastTurnErrorMessage?: string;
  stalledSinceMs?: number;
  options: Record<string, SpawnOptionValue>;
  skills: string[];
  /** The auth defaults applied, redacted: which kinds of credential were passed, never their values. */
  auth?: { mode?: string; provider?: string; hasToken?: boolean; hasApiKey?: boolean };
  /** Model calls made through the llm-endpoint sidecar (docs/llm-endpoint.md); absent when none went through it. */
  modelUsage?: ModelUsage;
  info?: Record<string, unknown>;
  eventsPath: string;
  terminalPath?: string;
  pendingPrompts: PendingPromptView[];
  /** The git worktree the session runs in (its own, or its parent's when it inherited it). */
  worktree?: { path: string; branch: string; repo: string; slug: string; baseCommit: string };
  /**
   * The worktree's heavy phases (core/workspaces): `queued` with a 1-based `position`, `running`
   * with its `phase`, `done`, or `failed` with the `phase`, `command` and `outputTail`.
   */
  provisioning?: {
    state: "queued" | "running" | "done" | "failed";
    position?: number;
    phase?: string;
    command?: string;
    outputTail?: string;
  };
  /** How many further levels of sessions this one may spawn (unset = no limit); see docs/workspaces.md. */
  delegation?: number;
  /** The swarm run and step this session runs (docs/swarm.md). */
  run?: SwarmStepRef;
  /** The latest context use reported, once one with a known window arrived (docs/sessions.md). */
  context?: ContextUse;
  /** The session this one continues in a fresh context (`contextContinuity.continueFreshAtPct`). */
  continuedFrom?: string;
  /** The session that continues this one in a fresh context. */
  continuedAs?: string;
  /** Set by a context hard stop: why every further prompt is refused. */
  refusal?: string;
  /** The session steward's latest verdict (docs/steward.md). */
  verdict?: SessionVerdict;
}

/** What the steward's judge said of a session; `judge_error`: the judge could not be asked or gave no usable answer. */
export interface SessionVerdict {
  verdict: "on_track" | "stuck" | "needs_human" | "done" | "judge_error";
  reason: string;
  suggestedPrompt?: string;
  /** What asked for it: `stalled`, `turn-ended`, `handoff-suggested`, `context-warn` (…), or `request`. */
  trigger: string;
  /** Epoch ms of the verdict. */
  at: number;
  /** The judge model asked. */
  model: string;
}

/** A session's context use: the input tokens of its latest model call over the model's window. */
export interface ContextUse {
  /** The model id the report named (`agent` for the agent's own report without one). */
  model: string;
  inputTokens: number;
  window: number;
  /** Percent of `window`, one decimal. */
  pct: number;
  source: "llm-endpoint" | "agent";
}

/** A session started as a step of a swarm run. */
export interface SwarmStepRef {
  runId: string;
  stepId: string;
}

export interface StartRequest {
  adapter: string;
  cwd?: string;
  prompt?: string;
  label?: string;
  name?: string;
  options?: Record<string, SpawnOptionValue>;
  skills?: string[];
  parentId?: string;
  /** Terminal sessions. */
  argv?: string[];
  env?: Record<string, string>;
  /** A worktree slug, or `true` for an automatic one (worktrees.isolation decides the rest). */
  worktree?: string | true;
  /** A `--root` for a new worktree over the resolved `worktrees.root`. */
  worktreeRoot?: string;
  /** `false`: never nest under the calling session; `true`: nest even under `spawn.attach: on-request`. */
  attach?: boolean;
  /** `false`: no implicit idempotency key for this spawn. */
  dedupe?: boolean;
  /** A second spawn with the same key returns the live session that holds it (`deduped: true`). */
  idempotencyKey?: string;
  /** The delegation asked for the new session (bounded by its parent and calling session; see docs/workspaces.md). */
  delegation?: number;
  /** The caller's session token (`X-Svc-Session-Token`), from which its session is derived. */
  callerToken?: string;
  /** Set by run-swarm only: the run and step the session runs. */
  run?: SwarmStepRef;
  /** Trace this session (docs/tracing.md), over `defaults.extTracing`; unset: as its parent's session when that one is traced, else the default. */
  extTracing?: boolean;
}

/** What a spawn returns: the session, and `deduped: true` when an idempotency key matched a live one. */
export interface StartResult {
  descriptor: SessionDescriptor;
  result?: import("../plugin-api/sessions.js").PromptReceipt;
  deduped?: boolean;
}

export interface TurnResult {
  promptId: string;
  stopReason: string;
  text: string;
  error?: string;
}
