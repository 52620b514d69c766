/**
 * The one place a planned step becomes a `StartRequest` for `SessionRuntime.start` (the spawn path
 * of `sessions start`, so `defaults`, worktree isolation and provisioning, dedupe and provenance
 * apply to steps as to any spawn). The step's `worktree` is passed as `sessions start --worktree`
 * passes it; the idempotency key is the run and the step, so a step never starts twice within a run
 * and never matches another run's session.
 */
import type { StartRequest } from "../sessions/types.js";
import type { PlannedStep } from "./plan.js";

export function toStartRequest(step: PlannedStep, prompt: string, runId: string, worktreeRoot?: string): StartRequest {
  return {
    adapter: step.adapter.slug!,
    cwd: step.cwd,
    prompt,
    label: `${runId}/${step.label}`,
    options: step.options,
    ...(step.skills ? { skills: step.skills } : {}),
    ...(step.worktree !== undefined ? { worktree: step.worktree } : {}),
    ...(worktreeRoot ? { worktreeRoot } : {}),
    idempotencyKey: `${runId}:${step.id}`,
  };
}
