/**
 * The session a run's steps nest under (SPEC.md spawn.attach): an explicit `parentSessionId`, else
 * the calling session (its `X-Svc-Session-Token`) unless `attach: false` or `spawn.attach:
 * on-request` without `attach: true`. Checked once at the start of the run, as `sessions start`
 * checks its parent: an unknown session is `not_found`, a session with delegation 0 may not spawn.
 * Each step then starts with that parent, so depth, role cutoff and delegation cap apply to it.
 */
import type { EffectiveConfig } from "../config/config-service.js";
import { SvcError } from "../errors.js";
import type { SessionRuntime } from "../sessions/runtime.js";
import { attachTo, childDelegation } from "../workspaces/lineage.js";

export function runParent(sessions: SessionRuntime, cfg: EffectiveConfig, input: { attach?: boolean; parentSessionId?: string }, callerToken: string | undefined): string | undefined {
  const parentId = attachTo(cfg.spawn.attach, sessions.workspaces.tokens.sessionOf(callerToken), { ...(input.attach !== undefined ? { attach: input.attach } : {}), ...(input.parentSessionId ? { parentId: input.parentSessionId } : {}) });
  if (!parentId) return undefined;
  if (sessions.state(parentId) === "unknown") throw new SvcError("not_found", `parent session ${parentId} does not exist`);
  childDelegation(cfg, [sessions.callerGrantor(parentId)], undefined);
  return parentId;
}
