/**
 * The `defaults` section as pure functions, for the session runtime to call at every agent start.
 */
import type { SpawnAuth, SpawnOptionValue } from "../plugin-api/sessions.js";
import type { EffectiveConfig } from "./config-service.js";

export interface ResolvedSpawnDefaults {
  options: Record<string, SpawnOptionValue>;
  skills: string[];
  auth?: SpawnAuth;
}

/**
 * Options: `defaults.options` < `defaults.adapters.<slug>.options` < explicit. Skills: the union of
 * `defaults.skills` and `defaults.adapters.<slug>.skills` (first occurrence order), replaced whole
 * by an explicit `skills` array. Auth: the adapter's `auth` block, when it has one.
 */
export function resolveSpawnDefaults(
  cfg: EffectiveConfig,
  adapterSlug: string,
  explicit: { options?: Record<string, SpawnOptionValue>; skills?: string[] },
): ResolvedSpawnDefaults {
  const d = cfg.defaults;
  const perAdapter = d.adapters?.[adapterSlug];
  const options = { ...(d.options ?? {}), ...(perAdapter?.options ?? {}), ...(explicit.options ?? {}) };
  const skills = explicit.skills
    ? [...explicit.skills]
    : [...new Set([...(d.skills ?? []), ...(perAdapter?.skills ?? [])])];
  const a = perAdapter?.auth;
  if (!a) return { options, skills };
  const auth: SpawnAuth = {};
  if (a.mode !== undefined) auth.mode = a.mode;
  if (a.token !== undefined) auth.token = a.token;
  if (a.apiKey !== undefined) auth.apiKey = a.apiKey;
  if (a.provider !== undefined) auth.provider = a.provider;
  return { options, skills, auth };
}

/** `agent_prompt`/`message_parent` interrupt: an explicit value wins, else `defaults.agentPromptInterrupt`. */
export function resolvePromptInterrupt(cfg: EffectiveConfig, explicit?: boolean): boolean {
  return explicit ?? cfg.defaults.agentPromptInterrupt;
}

/** The inter-session messaging policy with its defaults filled in. */
export function messagingPolicy(cfg: EffectiveConfig): {
  allowSiblings: boolean;
  agentInterrupt: "allow" | "deny";
  pendingPromptStaleMinutes: number;
} {
  const m = cfg.defaults.messaging;
  return {
    allowSiblings: m.allowSiblings,
    agentInterrupt: m.agentInterrupt,
    pendingPromptStaleMinutes: m.pendingPromptStaleMinutes,
  };
}

/** A session at spawn depth >= `defaults.defaultRoleDepthCutoff` defaults to executor, else supervisor. */
export function roleForDepth(cfg: EffectiveConfig, depth: number): "supervisor" | "executor" {
  return depth >= cfg.defaults.defaultRoleDepthCutoff ? "executor" : "supervisor";
}

/** The delegation a supervisor may grant a child: the request, capped by `defaults.maxGrantableDelegation` when set. */
export function grantableDelegation(cfg: EffectiveConfig, requested: number): number {
  const cap = cfg.defaults.maxGrantableDelegation;
  return cap === undefined ? requested : Math.min(requested, cap);
}
