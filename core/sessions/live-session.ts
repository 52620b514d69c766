import type {
  AdapterSession,
  DeliveryRef,
  PromptReceipt,
  PromptSender,
  PromptUrgency,
  SessionUpdateSink,
} from "../plugin-api/sessions.js";
import type { TranscriptWriter } from "./transcript.js";
import type { ModelUsage } from "./model-access.js";
import { TurnModelHealth } from "./turn-model-health.js";
import type { Fired } from "./context-policy.js";
import type { ContextUse, SessionDescriptor, SessionState, SessionVerdict, TurnResult } from "./types.js";

export interface PendingPrompt {
  promptId: string;
  text: string;
  sender: PromptSender;
  urgency: PromptUrgency;
  enqueuedAt: number;
  staleNotified: boolean;
  ref?: DeliveryRef;
}

export interface LiveSessionHooks {
  now(): number;
  /** The turn loop and the sink report here (events, watchdog bookkeeping). */
  onTurnEnded(session: LiveSession, result: TurnResult): void;
  /** `unrun`: prompts still queued when the process ended. */
  onExited(session: LiveSession, unrun: PendingPrompt[]): void;
  onQuota(session: LiveSession, report: { profile: string; remaining: number; window: string }): void;
  /** The agent reported its context use (ACP `usage_update`: tokens `used` of a window of `size`). */
  onUsage(session: LiveSession, report: { used: number; size: number }): void;
  /**
   * The agent ended a turn: resolves once the model calls it made are all noted (the sidecar's
   * reports may trail the agent's answer); undefined when there is nothing to wait for.
   */
  modelCallsNoted?(session: LiveSession): Promise<void> | undefined;
}

/** What a session is given at its start and keeps: its descriptor's fixed fields. */
export type SessionFixed = Pick<
  SessionDescriptor,
  | "id"
  | "adapter"
  | "source"
  | "kind"
  | "label"
  | "name"
  | "cwd"
  | "parentId"
  | "depth"
  | "role"
  | "createdAt"
  | "options"
  | "skills"
  | "auth"
  | "eventsPath"
  | "terminalPath"
  | "worktree"
  | "delegation"
  | "run"
>;

/**
 * One session in the daemon: its adapter handle, its prompt queue and the turn loop, its
 * transcript(s), and the liveness facts the watchdog reads.
 */
export class LiveSession {
  state: SessionState = "starting";
  handle?: AdapterSession;
  turns = 0;
  lastActivityAt: number;
  /** Output or usage arrived since the current turn's prompt. */
  turnHadOutput = false;
  lastTurnEndedAt?: number;
  lastStopReason?: string;
  lastTurnErrorMessage?: string;
  stalledSinceMs?: number;
  /** The stall is the model calls' (every one failing, watchdog.ts): activity does not clear it, a successful call does. */
  stalledByModelCalls = false;
  endedAt?: number;
  exit?: SessionDescriptor["exit"];
  /** `stop` asked for the end: whoever reports the exit, it is recorded with error "stopped". */
  stopRequested = false;
  readonly queue: PendingPrompt[] = [];
  current?: PendingPrompt;
  private turnText = "";
  private readonly waiters = new Map<string, Array<(r: TurnResult) => void>>();
  readonly results = new Map<string, TurnResult>();
  readonly quotaWindowsSignalled = new Set<string>();
  /** Model calls through the llm-endpoint sidecar (set at the first). */
  modelUsage: ModelUsage | undefined;
  /** What those calls say about the current turn (turn-model-health.ts). */
  readonly modelHealth = new TurnModelHealth();
  /** The latest context use reported (context-continuity.ts). */
  context?: ContextUse;
  /** The context thresholds fired and not re-armed (context-policy.ts). */
  contextFired: Fired = new Map();
  /** A report without a known context window was said once (`context.policy-off`). */
  contextOffSaid = false;
  /** Why no further turn starts (a fresh continuation under way, or a hard stop): queued prompts wait. */
  held?: "continuing" | "hard-stopped";
  /** The hard stop's refusal: every further prompt is refused with it. */
  refusal?: string;
  continuedFrom?: string;
  continuedAs?: string;
  /** How many times the session was resumed (resume.ts). */
  resumes = 0;
  /** The session steward's latest verdict (core/steward). */
  verdict?: SessionVerdict;
  /** Settles when the agent has started (after the worktree's provisioning, when it has any). */
  ready?: Promise<void>;
  /** The session made its worktree (a child that inherited its parent's does not own it). */
  worktreeOwner = false;
  /** Set once the process ended: parking and closing the transcripts. */
  closing?: Promise<void>;
  /** The trace context its agent starts with (`TRACEPARENT`), when the session is traced (core/tracing). */
  traceEnv?: Record<string, string>;

  constructor(
    readonly fixed: SessionFixed,
    readonly transcript: TranscriptWriter,
    readonly terminal: TranscriptWriter | undefined,
    private readonly hooks: LiveSessionHooks,
  ) {
    this.lastActivityAt = fixed.createdAt;
  }

  get id(): string {
    return this.fixed.id;
  }

  get live(): boolean {
    return this.state !== "ended";
  }

  /** Starting, in a turn, or with prompts waiting: a new prompt would not run at once. */
  get busy(): boolean {
    return this.state === "busy" || this.state === "starting" || this.queue.length > 0;
  }

  /** The sink handed to the adapter. */
  sink(): SessionUpdateSink {
    return {
      update: (kind, data) => {
        this.activity(true);
        if (kind === "agent_message_chunk") {
          const content = (data as { content?: { type?: string; text?: string } } | undefined)?.content;
          if (content?.type === "text" && typeof content.text === "string") this.turnText += content.text;
        }
        this.transcript.append("update", { kind, update: data });
        const usage = kind === "usage_update" ? (data as { used?: unknown; size?: unknown } | undefined) : undefined;
        if (typeof usage?.used === "number" && typeof usage.size === "number")
          this.hooks.onUsage(this, { used: usage.used, size: usage.size });
      },
      output: (stream, text) => {
        this.activity(true);
        (this.terminal ?? this.transcript).append("output", { stream, text });
      },
      quota: (report) => {
        this.activity(true);
        this.transcript.append("quota", report);
        this.hooks.onQuota(this, report);
      },
      exited: (reported) => {
        if (this.state === "ended") return;
        const info = this.stopRequested ? { ...reported, error: "stopped" } : reported;
        this.state = "ended";
        this.endedAt = this.hooks.now();
        this.exit = info;
        this.transcript.append("session.ended", info);
        const unrun = [...this.queue];
        this.failPending(info.error ?? `the session's process exited (code ${info.code}, signal ${info.signal})`);
        this.hooks.onExited(this, unrun);
      },
    };
  }

  private activity(output: boolean): void {
    this.lastActivityAt = this.hooks.now();
    if (output) this.turnHadOutput = true;
    if (!this.stalledByModelCalls) this.stalledSinceMs = undefined;
  }

  /** A model call of this session ended (through the sidecar): counted for the turn; a success ends a stall of failing calls. */
  noteModelCall(call: { status: number; error?: string }): void {
    if (this.modelHealth.note(call, this.hooks.now()) !== "ok" || !this.stalledByModelCalls) return;
    this.stalledByModelCalls = false;
    this.stalledSinceMs = undefined;
    this.lastTurnErrorMessage = undefined;
  }

  /** Queues or runs a prompt. The runtime has already applied the policy to `urgency`. */
  enqueue(p: PendingPrompt, requested?: PromptUrgency, note?: string): PromptReceipt {
    let delivery: PromptReceipt["delivery"];
    if (!this.busy) {
      this.queue.push(p);
      delivery = "started";
    } else if (p.urgency === "queue") {
      this.queue.push(p);
      delivery = "queued";
    } else {
      const firstNormal = this.queue.findIndex((q) => q.urgency === "queue");
      this.queue.splice(firstNormal === -1 ? this.queue.length : firstNormal, 0, p);
      delivery = p.urgency === "interrupt" && this.state === "busy" ? "interrupted" : "steered";
    }
    this.transcript.append("prompt.received", {
      promptId: p.promptId,
      sender: p.sender,
      urgency: p.urgency,
      delivery,
      ...(requested ? { requested, note } : {}),
      ...(p.ref ? { ref: p.ref } : {}),
    });
    if (delivery === "interrupted") void this.handle?.cancel?.();
    const position = this.queue.indexOf(p);
    queueMicrotask(() => this.pump());
    return { promptId: p.promptId, sessionId: this.id, delivery, position, ...(requested ? { requested, note } : {}) };
  }

  /** Resolves when the prompt's turn has ended (or the session ended first). */
  waitFor(promptId: string): Promise<TurnResult> {
    const done = this.results.get(promptId);
    if (done) return Promise.resolve(done);
    return new Promise((resolve) => {
      const list = this.waiters.get(promptId) ?? [];
      list.push(resolve);
      this.waiters.set(promptId, list);
    });
  }

  /** Starts the next turn when the session is idle. */
  pump(): void {
    if (this.state !== "idle" || !this.handle?.prompt || this.held) return;
    const next = this.queue.shift();
    if (!next) return;
    void this.runTurn(next);
  }

  private async runTurn(p: PendingPrompt): Promise<void> {
    this.state = "busy";
    this.current = p;
    this.turnText = "";
    this.turnHadOutput = false;
    this.lastActivityAt = this.hooks.now();
    this.stalledSinceMs = undefined;
    this.stalledByModelCalls = false;
    this.lastTurnErrorMessage = undefined;
    this.modelHealth.begin();
    this.transcript.append("prompt", { promptId: p.promptId, sender: p.sender, text: p.text });
    let result: TurnResult;
    try {
      const outcome = await this.handle!.prompt!(p.text);
      const noted = this.hooks.modelCallsNoted?.(this);
      if (noted) await noted;
      // An agent whose every model call failed may still say end_turn: the turn is an error all the same.
      const failed = this.modelHealth.end(outcome.stopReason);
      result = {
        promptId: p.promptId,
        stopReason: outcome.stopReason,
        text: this.turnText,
        ...(failed ? { error: failed } : {}),
      };
      if (failed) this.lastTurnErrorMessage = failed;
    } catch (err) {
      this.modelHealth.end(undefined);
      const message = (err as Error)?.message ?? String(err);
      result = { promptId: p.promptId, stopReason: "error", text: this.turnText, error: message };
      this.lastTurnErrorMessage = message;
    }
    this.turns++;
    this.current = undefined;
    this.lastTurnEndedAt = this.hooks.now();
    this.lastStopReason = result.stopReason;
    this.stalledSinceMs = undefined;
    this.stalledByModelCalls = false;
    this.transcript.append(result.error ? "turn.failed" : "turn.ended", result);
    if (this.state === "busy") this.state = "idle";
    this.settle(result);
    this.hooks.onTurnEnded(this, result);
    this.pump();
  }

  /** Records a prompt's outcome and wakes its waiters. */
  settle(result: TurnResult): void {
    this.results.set(result.promptId, result);
    if (this.results.size > 200) this.results.delete(this.results.keys().next().value!);
    for (const w of this.waiters.get(result.promptId) ?? []) w(result);
    this.waiters.delete(result.promptId);
  }

  private failPending(message: string): void {
    for (const p of this.queue.splice(0))
      this.settle({ promptId: p.promptId, stopReason: "error", text: "", error: message });
    for (const [promptId] of this.waiters) {
      if (promptId !== this.current?.promptId) this.settle({ promptId, stopReason: "error", text: "", error: message });
    }
  }
}
