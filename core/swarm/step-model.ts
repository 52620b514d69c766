/**
 * A step's model, resolved before its adapter: a literal id is the step's own; `role:<name>` follows
 * the role table, highest first: the run's `--model <role>=<id>`, the repository's models file,
 * config `models`, the built-in default. Every hop of a `role:` chain is kept with its source.
 */
import { SvcError } from "../errors.js";
import type { ModelRoleValue } from "../config/schema.js";
import {
  chainResult,
  followRoleChain,
  layeredLookup,
  modelOf,
  ROLE_PREFIX,
  type ModelLayers,
  type ModelRoleSource,
} from "../config/models.js";

export interface StepModel {
  /** The step's `model` as written. */
  ref: string;
  id: string;
  route?: string;
  profile?: string;
  /** `step` for a literal id; for a role, the layer that defined the step's role. */
  source: "step" | ModelRoleSource;
  /** For a role: each hop, `{role, value, source}`. */
  chain?: Array<{ role: string; value: string; source: ModelRoleSource }>;
}

export function resolveStepModel(
  ref: string,
  config: { models?: Record<string, ModelRoleValue> },
  layers: ModelLayers,
): StepModel {
  if (!ref.startsWith(ROLE_PREFIX)) return { ref, id: ref, source: "step" };
  const { lookup, roles } = layeredLookup(config, layers);
  const hops = followRoleChain(ref.slice(ROLE_PREFIX.length), lookup, roles);
  const r = chainResult(hops);
  return {
    ref,
    id: r.model,
    ...(r.route !== undefined ? { route: r.route } : {}),
    ...(r.profile !== undefined ? { profile: r.profile } : {}),
    source: r.source,
    chain: hops.map((h) => ({ role: h.role, value: modelOf(h.value), source: h.source })),
  };
}

/** `--model <role>=<id>` values as the run layer; a bad one is described. */
export function parseRunModels(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf("=");
    if (eq <= 0 || eq === p.length - 1)
      throw new SvcError(
        "usage",
        `--model ${JSON.stringify(p)}: expected <role>=<model id>, e.g. --model review.small=claude-haiku-4-5`,
      );
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}
