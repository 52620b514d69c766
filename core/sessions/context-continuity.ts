/**
 * Applies `defaults.contextContinuity` to a session's context-use reports (from the llm-endpoint
 * sidecar, or the agent's own ACP `usage_update`): records the use on the session, asks the pure
 * policy (context-policy.ts) what crossed, and does it: warn, compact, continue fresh, hard stop.
 * Each writes a `context.*` transcript line and emits a `session:context-*` daemon event.
 */
import type { Logger } from "../runtime/logger.js";
import { contextPct, cross, verdict, type ContextPolicy, type Threshold, type Verdict } from "./context-policy.js";
import { handoffSummary } from "./handoff-summary.js";
import type { LiveSession, PendingPrompt } from "./live-session.js";
import { readTranscript } from "./transcript-reader.js";
import type { ContextUse } from "./types.js";

export interface ContextReport {
  model: string;
  inputTokens: number;
  /** The model's context window in tokens; undefined when unknown (the report then does nothing). */
  window: number | undefined;
  source: ContextUse["source"];
}

/** What the runtime lends the policy's actions. */
export interface ContinuityHost {
  policy(): ContextPolicy;
  emit(type: string, data: unknown): void;
  logger: Logger;
  promptId(): string;
  now(): number;
  /** Starts the session that continues `old` (same adapter, cwd, options; it takes `old`'s worktree over) with `prompt` queued first. */
  continueFresh(old: LiveSession, prompt: string): Promise<LiveSession>;
  stop(sessionId: string): Promise<unknown>;
  /** Parks the sentinel deliveries among `unrun` (prompts that will never run here). */
  park(s: LiveSession, unrun: PendingPrompt[]): Promise<void>;
}

type Crossed = ContextUse & { sessionId: string; threshold: string; atPct: number; alsoCrossed?: string[] };

export class ContextContinuity {
  constructor(private readonly host: ContinuityHost) {}

  report(s: LiveSession, r: ContextReport): void {
    if (!s.live || s.fixed.kind !== "agent") return;
    if (r.window === undefined || !(r.window > 0)) {
      if (s.contextOffSaid) return;
      s.contextOffSaid = true;
      const data = {
        model: r.model,
        source: r.source,
        reason: `the model catalog has no context window for model ${JSON.stringify(r.model)}: contextContinuity does not act on its reports`,
      };
      s.transcript.append("context.policy-off", data);
      this.host.logger.warn("context policy off for a session: unknown context window", { sessionId: s.id, ...data });
      return;
    }
    const use: ContextUse = {
      model: r.model,
      inputTokens: r.inputTokens,
      window: r.window,
      pct: contextPct(r.inputTokens, r.window),
      source: r.source,
    };
    s.context = use;
    if (s.held) return;
    const policy = this.host.policy();
    const { fired, crossed } = cross(s.contextFired, use.pct, policy.thresholds, use.model);
    s.contextFired = fired;
    const v = verdict(policy.mode, crossed);
    if (v) this.act(s, use, v);
  }

  private act(s: LiveSession, use: ContextUse, v: Verdict): void {
    const data: Crossed = {
      sessionId: s.id,
      ...use,
      threshold: v.acting.key,
      atPct: v.acting.atPct,
      ...(v.noted.length ? { alsoCrossed: v.noted.map((t) => t.key) } : {}),
    };
    switch (v.does) {
      case "warn":
        return this.record(s, "warn", { ...data, ...(v.wouldHave ? { wouldHave: v.wouldHave } : {}) });
      case "compact":
        return this.compact(s, data);
      case "continueFresh":
        void this.continueFresh(s, data, v.acting);
        return;
      case "hardStop":
        return this.hardStop(s, data);
    }
  }

  private record(s: LiveSession, what: string, data: object): void {
    s.transcript.append(`context.${what}`, data);
    this.host.emit(`session:context-${what}`, data);
  }

  private compact(s: LiveSession, data: Crossed): void {
    const command = s.handle?.compactCommand?.();
    if (!command) {
      this.record(s, "compact", {
        ...data,
        compacted: false,
        reason: `adapter ${s.fixed.adapter} cannot compact this session (the agent advertised no compact command)`,
      });
      return;
    }
    const promptId = this.host.promptId();
    // `steer`: right after the in-flight turn, ahead of queued prompts.
    s.enqueue({
      promptId,
      text: command,
      sender: { kind: "system" },
      urgency: "steer",
      enqueuedAt: this.host.now(),
      staleNotified: true,
    });
    this.record(s, "compact", { ...data, compacted: true, promptId, command });
  }

  /** Waits for the in-flight turn, starts the continuation with a handoff summary, moves queued prompts over, then stops `s`. */
  private async continueFresh(s: LiveSession, data: Crossed, t: Threshold): Promise<void> {
    s.held = "continuing";
    s.transcript.append("context.continue", { ...data, ...(s.current ? { afterTurn: s.current.promptId } : {}) });
    try {
      if (s.current) await s.waitFor(s.current.promptId);
      if (!s.live) throw new Error("the session ended before it could continue");
      await s.transcript.flushed();
      const summary = handoffSummary(await readTranscript(s.fixed.eventsPath), {
        fromSessionId: s.id,
        pct: data.pct,
        key: t.key,
        atPct: t.atPct,
      });
      const next = await this.host.continueFresh(s, summary);
      const moved = s.queue.splice(0).map((p) => {
        const promptId = this.host.promptId();
        next.enqueue({ ...p, promptId, enqueuedAt: this.host.now(), staleNotified: false });
        s.settle({
          promptId: p.promptId,
          stopReason: "error",
          text: "",
          error: `moved to session ${next.id} as ${promptId}: session ${s.id} continued in a fresh context`,
        });
        return { from: p.promptId, to: promptId };
      });
      this.record(s, "continued", { ...data, continuedAs: next.id, ...(moved.length ? { moved } : {}) });
      await this.host.stop(s.id);
    } catch (err) {
      const error = (err as Error).message;
      if (s.live) s.held = undefined;
      this.record(s, "continued", { ...data, error });
      this.host.logger.warn("could not continue a session in a fresh context", { sessionId: s.id, error });
      s.pump();
    }
  }

  private hardStop(s: LiveSession, data: Crossed): void {
    s.held = "hard-stopped";
    s.refusal =
      `session ${s.id} takes no further prompts: its context use reached ${data.pct}% of ${data.model}'s window (${data.inputTokens} of ${data.window} tokens), ` +
      `at or above defaults.contextContinuity.${data.threshold} (${data.atPct}). Its transcript stays readable; start a fresh session to go on, ` +
      `or set a continueFreshAtPct below ${data.atPct} so that svc continues it for you`;
    const unrun = s.queue.splice(0);
    for (const p of unrun) s.settle({ promptId: p.promptId, stopReason: "error", text: "", error: s.refusal });
    void this.host.park(s, unrun);
    const cancelled = s.current?.promptId;
    if (cancelled)
      void s.handle?.cancel?.()?.catch((err: Error) =>
        this.host.logger.warn("could not cancel the turn at a context hard stop", {
          sessionId: s.id,
          error: err.message,
        }),
      );
    this.record(s, "hard-stop", {
      ...data,
      reason: s.refusal,
      ...(cancelled ? { cancelled } : {}),
      refused: unrun.map((p) => p.promptId),
    });
  }
}
