/**
 * The one place a planned step becomes a `StartRequest` for `SessionRuntime.start` (the spawn path
 * of `sessions start`, so `defaults`, worktree isolation and provisioning, dedupe and provenance
 * apply to steps as to any spawn). The step's `worktree` is passed as `sessions start --worktree`
 * passes it; the idempotency key is the run and the step, so a step never starts twice within a run
 * and never matches another run's session. Lineage: a run started by a session (spawn.attach) nests
 * every step under it, so depth, role and delegation apply as to any child; otherwise the steps
 * are root sessions. Either way each carries its run and step.
 */
import type { StartRequest } from "../sessions/types.js";
import type { PlannedStep } from "./plan.js";

export function toStartRequest(
  step: PlannedStep,
  prompt: string,
  runId: string,
  via: { parentSessionId?: string | undefined; worktreeRoot?: string | undefined } = {},
): StartRequest {
  const { parentSessionId, worktreeRoot } = via;
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
    ...(parentSessionId ? { parentId: parentSessionId } : { attach: false }),
    run: { runId, stepId: step.id },
  };
}
