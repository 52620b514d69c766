/**
 * The one place a planned step becomes a `StartRequest` for `SessionRuntime.start` (the spawn path
 * of `sessions start`, so `defaults` and everything else that applies at spawn apply to steps).
 *
 * WIRING POINT (issue 14): StartRequest gains `worktree`, `attach`, `dedupe` and `idempotencyKey`.
 * When it has, pass `worktree: step.worktree` here (the plan already carries it and `--dry-run`
 * shows it), and `idempotencyKey: \`${runId}:${step.id}\`` if a retried run should not start a step
 * twice. Until then a step with `worktree` is refused at plan time (SPAWN_TAKES_WORKTREE in plan.ts: set it to true then),
 * so nothing silently runs outside its worktree.
 */
import type { StartRequest } from "../sessions/types.js";
import type { PlannedStep } from "./plan.js";

export function toStartRequest(step: PlannedStep, prompt: string, runId: string): StartRequest {
  return {
    adapter: step.adapter.slug!,
    cwd: step.cwd,
    prompt,
    label: `${runId}/${step.label}`,
    options: step.options,
    ...(step.skills ? { skills: step.skills } : {}),
  };
}
