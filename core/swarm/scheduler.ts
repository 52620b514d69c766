/**
 * Runs the planned steps in dependency order, at most `concurrency` at once. A step starts when
 * every step it needs has succeeded; when one of them failed, was skipped or cancelled, it is
 * skipped with that reason, and the steps that do not depend on it go on. A step with a plan
 * problem fails at once. Cancelling (the signal) stops running steps through the runner and
 * cancels the ones not started.
 */
import type { PlannedStep, RunPlan } from "./plan.js";
import type { StepRecord } from "./records.js";
import { renderPrompt } from "./template.js";

export interface TurnOutcome {
  sessionId?: string;
  stopReason: string;
  output: string;
  error?: string;
  /** What became of the step's model at the agent (the session's `info.model`). */
  model?: StepRecord["model"];
}

/** Starts one step's session with its rendered prompt and waits for its turn to end. */
export type StepRunner = (
  step: PlannedStep,
  prompt: string,
  ctx: { signal: AbortSignal; onSession(id: string): void },
) => Promise<TurnOutcome>;

export interface ScheduleOptions {
  concurrency: number;
  signal: AbortSignal;
  now(): number;
  /** Called after every change of a step's record. */
  onChange(id: string, rec: StepRecord): void;
}

const TERMINAL = new Set(["succeeded", "failed", "skipped", "cancelled"]);

export async function runSchedule(
  plan: RunPlan,
  runner: StepRunner,
  opts: ScheduleOptions,
): Promise<Record<string, StepRecord>> {
  const recs: Record<string, StepRecord> = Object.fromEntries(
    plan.steps.map((s) => [s.id, { state: "waiting" } as StepRecord]),
  );
  const outputs = new Map<string, string>();
  const inFlight = new Map<string, Promise<void>>();
  const set = (id: string, rec: StepRecord) => {
    recs[id] = rec;
    opts.onChange(id, rec);
  };
  const launch = (step: PlannedStep) => {
    const startedAt = opts.now();
    if (step.problem) {
      // It never starts: failed at once, with why.
      set(step.id, { state: "failed", startedAt, endedAt: startedAt, error: step.problem });
      return;
    }
    set(step.id, { state: "running", startedAt });
    const work = (async () => {
      let sessionId: string | undefined;
      try {
        const out = await runner(step, renderPrompt(step.prompt, outputs), {
          signal: opts.signal,
          onSession: (id) => {
            sessionId = id;
            set(step.id, { ...recs[step.id]!, sessionId: id });
          },
        });
        sessionId = out.sessionId ?? sessionId;
        const base = {
          startedAt,
          endedAt: opts.now(),
          stopReason: out.stopReason,
          output: out.output,
          ...(sessionId ? { sessionId } : {}),
          ...(out.model ? { model: out.model } : {}),
        };
        if (!out.error && out.stopReason === "end_turn") {
          outputs.set(step.id, out.output);
          set(step.id, { state: "succeeded", ...base });
        } else if (opts.signal.aborted) set(step.id, { state: "cancelled", ...base, reason: "the run was cancelled" });
        else
          set(step.id, {
            state: "failed",
            ...base,
            error: out.error ?? `the turn ended with stop reason ${out.stopReason}`,
          });
      } catch (err) {
        const state = opts.signal.aborted ? "cancelled" : "failed";
        set(step.id, {
          state,
          startedAt,
          endedAt: opts.now(),
          ...(sessionId ? { sessionId } : {}),
          ...(state === "cancelled" ? { reason: "the run was cancelled" } : {}),
          error: (err as Error).message,
        });
      }
    })();
    inFlight.set(
      step.id,
      work.finally(() => inFlight.delete(step.id)),
    );
  };
  const cancelled = aborted(opts.signal);
  for (;;) {
    let progressed = true;
    while (progressed) {
      progressed = false;
      for (const step of plan.steps) {
        if (recs[step.id]!.state !== "waiting") continue;
        if (opts.signal.aborted) {
          set(step.id, { state: "cancelled", reason: "the run was cancelled before it started" });
          progressed = true;
          continue;
        }
        const blocked = step.needs.find((n) => ["failed", "skipped", "cancelled"].includes(recs[n]!.state));
        if (blocked) {
          const st = recs[blocked]!.state;
          set(step.id, {
            state: "skipped",
            reason: `needs ${blocked}, which ${st === "failed" ? "failed" : st === "skipped" ? "was skipped" : "was cancelled"}`,
          });
          progressed = true;
          continue;
        }
        if (step.needs.every((n) => recs[n]!.state === "succeeded") && inFlight.size < opts.concurrency) {
          launch(step);
          progressed = true;
        }
      }
    }
    if (inFlight.size === 0) break;
    // Once cancelled, only the running steps' ends are news (the signal stays resolved).
    await Promise.race(opts.signal.aborted ? [...inFlight.values()] : [...inFlight.values(), cancelled]);
  }
  for (const s of plan.steps)
    if (!TERMINAL.has(recs[s.id]!.state)) set(s.id, { state: "cancelled", reason: "the run ended before it started" });
  return recs;
}

function aborted(signal: AbortSignal): Promise<void> {
  return signal.aborted
    ? Promise.resolve()
    : new Promise((r) => signal.addEventListener("abort", () => r(), { once: true }));
}
