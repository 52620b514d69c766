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

export const ROLE_PREFIX = "role:";

/** One hop of a `role:` chain: the role, the value it has and the layer that gave it. */
export interface RoleHop {
  role: string;
  value: ModelRoleValue;
  source: ModelRoleSource;
}

export type RoleLookup = (role: string) => { value: ModelRoleValue; source: ModelRoleSource } | undefined;

/** The model id (or `role:` reference) of a role value. */
export function modelOf(value: ModelRoleValue): string {
  return typeof value === "string" ? value : value.model;
}

/**
 * Follows `role:` references from `role` until a model id. A cycle is `config_invalid` naming the
 * chain (`role:a -> role:b -> role:a`); a role no layer defines is `not_found`.
 */
export function followRoleChain(role: string, lookup: RoleLookup, known: () => string[]): RoleHop[] {
  const hops: RoleHop[] = [];
  let current = role;
  for (;;) {
    const hit = lookup(current);
    if (!hit) {
      const via = hops.length
        ? ` (reached by ${[...hops.map((h) => ROLE_PREFIX + h.role), ROLE_PREFIX + current].join(" -> ")})`
        : "";
      throw new SvcError(
        "not_found",
        `model role "${current}" is not defined${via} (known roles: ${known().join(", ")})`,
      );
    }
    hops.push({ role: current, ...hit });
    const model = modelOf(hit.value);
    if (!model.startsWith(ROLE_PREFIX)) return hops;
    const next = model.slice(ROLE_PREFIX.length);
    if (hops.some((h) => h.role === next)) {
      throw new SvcError(
        "config_invalid",
        `model roles refer to each other in a cycle: ${[...hops.map((h) => ROLE_PREFIX + h.role), ROLE_PREFIX + next].join(" -> ")}`,
      );
    }
    current = next;
  }
}

/** The lookup over the layers, highest first, then the built-in defaults. */
export function layeredLookup(
  config: { models?: Record<string, ModelRoleValue> },
  layers: ModelLayers = {},
): { lookup: RoleLookup; roles: () => string[] } {
  const ordered: Array<[ModelRoleSource, Record<string, ModelRoleValue> | undefined]> = [
    ["run", layers.run],
    ["repository", layers.repository],
    ["config", config.models],
  ];
  const lookup: RoleLookup = (role) => {
    for (const [source, layer] of ordered) {
      const value = layer && Object.hasOwn(layer, role) ? layer[role] : undefined;
      if (value !== undefined) return { value, source };
    }
    const d = MODEL_ROLE_DEFAULTS[role];
    return d ? { value: d.model, source: "default" } : undefined;
  };
  const roles = () =>
    [...new Set([...Object.keys(MODEL_ROLE_DEFAULTS), ...ordered.flatMap(([, l]) => Object.keys(l ?? {}))])].sort();
  return { lookup, roles };
}

/** The resolved value at the end of a chain: the last hop's model, route and profile the outermost hop that sets them. */
export function chainResult(hops: readonly RoleHop[]): ResolvedModelRole {
  const last = hops[hops.length - 1]!;
  let extra: { route?: string; profile?: string } = {};
  for (const h of [...hops].reverse()) if (typeof h.value !== "string") extra = { ...extra, ...pick(h.value) };
  return { model: modelOf(last.value), ...extra, source: hops[0]!.source };
}

/** The resolved table of every known role (built-in and configured) with its source; throws at the first role that does not resolve. */
export function resolveModelRoles(
  config: { models?: Record<string, ModelRoleValue> },
  layers: ModelLayers = {},
): Record<string, ResolvedModelRole> {
  const { roles, problems } = resolveRoleTable(config, layers);
  const first = Object.values(problems)[0];
  if (first) throw first;
  return roles;
}

/**
 * Every known role resolved on its own: a role whose chain has a cycle or reaches an undefined
 * role is in `problems` (its error names the chain) and the others still resolve, so a cycle
 * hand-written into config.json breaks only the roles that reach it.
 */
export function resolveRoleTable(
  config: { models?: Record<string, ModelRoleValue> },
  layers: ModelLayers = {},
): { roles: Record<string, ResolvedModelRole>; problems: Record<string, SvcError> } {
  const { lookup, roles: known } = layeredLookup(config, layers);
  const roles: Record<string, ResolvedModelRole> = {};
  const problems: Record<string, SvcError> = {};
  for (const role of known()) {
    try {
      roles[role] = chainResult(followRoleChain(role, lookup, known));
    } catch (err) {
      if (!SvcError.is(err)) throw err;
      problems[role] = err;
    }
  }
  return { roles, problems };
}

/**
 * Why `models` (config.json's section, or a repository's) cannot be resolved on its own with the
 * built-in defaults: a cycle or a reference to an undefined role. `config set` refuses both, since
 * either would break the roles that reach it until unset.
 */
export function modelsProblem(models: Record<string, ModelRoleValue> | undefined): string | undefined {
  return Object.values(resolveRoleTable({ models }).problems)[0]?.message;
}

/**
 * Resolves a step's `model:` value: `role:<name>` through the role table, anything else is a
 * literal model id. Call it before choosing an adapter.
 */
export function resolveModelRef(
  ref: string,
  config: { models?: Record<string, ModelRoleValue> },
  layers: ModelLayers = {},
): { model: string; route?: string; profile?: string; role?: string } {
  if (!ref.startsWith(ROLE_PREFIX)) return { model: ref };
  const role = ref.slice(ROLE_PREFIX.length);
  const { lookup, roles } = layeredLookup(config, layers);
  const { source: _source, ...rest } = chainResult(followRoleChain(role, lookup, roles));
  return { ...rest, role };
}

/** Warnings for model ids in a role value that the catalog does not know. */
export function unknownModelWarnings(role: string, value: unknown): string[] {
  const id =
    typeof value === "string"
      ? value
      : typeof value === "object" && value !== null
        ? (value as { model?: unknown }).model
        : undefined;
  if (typeof id !== "string" || id.startsWith(ROLE_PREFIX) || isKnownModel(id)) return [];
  return [`models.${role}: "${id}" is not in the model catalog; accepted as given`];
}

function pick(v: { route?: string; profile?: string }): { route?: string; profile?: string } {
  return {
    ...(v.route !== undefined ? { route: v.route } : {}),
    ...(v.profile !== undefined ? { profile: v.profile } : {}),
  };
}
