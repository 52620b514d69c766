/**
 * The session a run's steps nest under (SPEC.md spawn.attach): an explicit `parentSessionId`, else
 * the calling session (its `X-Svc-Session-Token`) unless `attach: false` or `spawn.attach:
 * on-request` without `attach: true`. Checked once at the start of the run, as `sessions start`
 * checks its parent and its caller: an unknown parent is `not_found`, and neither the parent nor
 * the calling session (they differ under `attach: false`) may have delegation 0. Each step then
 * starts with that parent and caller, so depth, role cutoff and delegation cap apply to it.
 */
import type { EffectiveConfig } from "../config/config-service.js";
import { SvcError } from "../errors.js";
import type { SessionRuntime } from "../sessions/runtime.js";
import { attachTo, childDelegation } from "../workspaces/lineage.js";

export function runParent(
  sessions: SessionRuntime,
  cfg: EffectiveConfig,
  input: { attach?: boolean; parentSessionId?: string },
  callerId: string | undefined,
): string | undefined {
  const parentId = attachTo(cfg.spawn.attach, callerId, {
    ...(input.attach !== undefined ? { attach: input.attach } : {}),
    ...(input.parentSessionId ? { parentId: input.parentSessionId } : {}),
  });
  if (parentId && sessions.state(parentId) === "unknown")
    throw new SvcError("not_found", `parent session ${parentId} does not exist`);
  childDelegation(cfg, [sessions.grantorOf(parentId), sessions.grantorOf(callerId)], undefined);
  return parentId;
}
