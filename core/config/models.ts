/**
 * Model roles: a dotted role name resolves to a model id (plus optional route and profile).
 * Precedence, highest first: explicit run input, the repository's own `models` setting,
 * config.json `models`, the built-in default. A model reference `role:<name>` resolves through
 * the same table, before adapter selection.
 */
import { SvcError } from "../errors.js";
import { isKnownModel } from "./model-catalog.js";
import type { ModelRoleValue } from "./schema.js";

/** The built-in roles and their default model ids. */
export const MODEL_ROLE_DEFAULTS: Readonly<Record<string, { model: string; use: string }>> = {
  "review.small": { model: "claude-haiku-4-5", use: "reviewer for a small residual (repo-maintenance review step)" },
  "review.large": { model: "claude-opus-4-5", use: "reviewer for a large residual and the retry reviewer" },
  "review.pr": { model: "claude-sonnet-4-5", use: "CI pull-request reviewer" },
  "judge.session": { model: "claude-sonnet-4-5", use: "session-steward agent judge" },
};

export type ModelRoleSource = "run" | "repository" | "config" | "default";

export interface ResolvedModelRole {
  model: string;
  route?: string;
  profile?: string;
  source: ModelRoleSource;
}

export interface ModelLayers {
  /** Explicit run input (highest). */
  run?: Record<string, ModelRoleValue>;
  /** The repository's own `models` setting. */
  repository?: Record<string, ModelRoleValue>;
}

const ROLE_PREFIX = "role:";

/** The resolved table of every known role (built-in and configured) with its source. */
export function resolveModelRoles(config: { models?: Record<string, ModelRoleValue> }, layers: ModelLayers = {}): Record<string, ResolvedModelRole> {
  const ordered: Array<[ModelRoleSource, Record<string, ModelRoleValue> | undefined]> = [
    ["run", layers.run],
    ["repository", layers.repository],
    ["config", config.models],
  ];
  const roles = new Set([...Object.keys(MODEL_ROLE_DEFAULTS), ...ordered.flatMap(([, l]) => Object.keys(l ?? {}))]);
  const lookup = (role: string): { value: ModelRoleValue; source: ModelRoleSource } | undefined => {
    for (const [source, layer] of ordered) {
      const value = layer?.[role];
      if (value !== undefined) return { value, source };
    }
    const d = MODEL_ROLE_DEFAULTS[role];
    return d ? { value: d.model, source: "default" } : undefined;
  };
  const resolveRole = (role: string, seen: string[]): ResolvedModelRole => {
    const hit = lookup(role);
    if (!hit) throw new SvcError("not_found", `model role "${role}" is not defined (known roles: ${[...roles].sort().join(", ")})`);
    const v = typeof hit.value === "string" ? { model: hit.value } : hit.value;
    if (v.model.startsWith(ROLE_PREFIX)) {
      const target = v.model.slice(ROLE_PREFIX.length);
      if (seen.includes(target)) throw new SvcError("config_invalid", `model roles refer to each other in a cycle: ${[...seen, target].join(" -> ")}`);
      const inner = resolveRole(target, [...seen, target]);
      return { ...inner, ...pick(v), model: inner.model, source: hit.source };
    }
    return { model: v.model, ...pick(v), source: hit.source };
  };
  const out: Record<string, ResolvedModelRole> = {};
  for (const role of [...roles].sort()) out[role] = resolveRole(role, [role]);
  return out;
}

/**
 * Resolves a step's `model:` value: `role:<name>` through the role table, anything else is a
 * literal model id. Call it before choosing an adapter.
 */
export function resolveModelRef(ref: string, config: { models?: Record<string, ModelRoleValue> }, layers: ModelLayers = {}): { model: string; route?: string; profile?: string; role?: string } {
  if (!ref.startsWith(ROLE_PREFIX)) return { model: ref };
  const role = ref.slice(ROLE_PREFIX.length);
  const table = resolveModelRoles(config, layers);
  const hit = table[role];
  if (!hit) throw new SvcError("not_found", `${ref}: model role "${role}" is not defined (known roles: ${Object.keys(table).join(", ")})`);
  const { source: _source, ...rest } = hit;
  return { ...rest, role };
}

/** Warnings for model ids in a role value that the catalog does not know. */
export function unknownModelWarnings(role: string, value: unknown): string[] {
  const id = typeof value === "string" ? value : typeof value === "object" && value !== null ? (value as { model?: unknown }).model : undefined;
  if (typeof id !== "string" || id.startsWith(ROLE_PREFIX) || isKnownModel(id)) return [];
  return [`models.${role}: "${id}" is not in the model catalog; accepted as given`];
}

function pick(v: { route?: string; profile?: string }): { route?: string; profile?: string } {
  return { ...(v.route !== undefined ? { route: v.route } : {}), ...(v.profile !== undefined ? { profile: v.profile } : {}) };
}
