import type { AcpRecipe } from "../../core/plugin-api/index.js";

/** What became of the model a session asked for, as `info.model` shows it. */
export interface ModelChoice {
  /** The model id the session asked for (absent: none was asked for). */
  requested?: string;
  /** Whether the agent was told to use it. */
  applied: boolean;
  /** How: ACP `session/set_config_option`, ACP `session/set_model`, or the recipe's `selectModel` at start. */
  via?: "config-option" | "set-model" | "recipe";
  /** The model the agent says it runs, after the choice (its default when none was applied). */
  current?: string;
  /** Why it was not applied, e.g. "model not applied (agent default: X)". */
  note?: string;
}

/** The model parts of a `session/new` answer: ACP session config options and the unstable `models`. */
interface SessionAnswer {
  configOptions?: unknown;
  models?: unknown;
}

/** The requests a choice may send (the ACP client connection). */
export interface ModelChannel {
  setConfigOption(configId: string, value: string): Promise<unknown>;
  setModel(modelId: string): Promise<unknown>;
}

interface Choices {
  kind: "config-option" | "set-model";
  configId?: string;
  current?: string;
  values: Array<{ value: string; name?: string }>;
}

/**
 * Applies `requested` through the agent's own model selection where its `session/new` answer
 * offers one (a config option of category `model`, else `models.availableModels`), and tells what
 * happened. A recipe `selectModel` (env or args at spawn) counts as applied when the agent offers
 * no selection that names the model. Never throws: an agent that refuses the choice is reported.
 */
export async function chooseModel(
  answer: SessionAnswer,
  requested: string | undefined,
  recipe: AcpRecipe,
  channel: ModelChannel,
): Promise<ModelChoice | undefined> {
  const choices = modelChoices(answer);
  if (requested === undefined) return choices?.current ? { applied: false, current: choices.current } : undefined;
  const match = choices?.values.find((v) => v.value === requested || v.name === requested);
  if (choices && match) {
    if (choices.current === match.value) return { requested, applied: true, via: choices.kind, current: match.value };
    try {
      if (choices.kind === "config-option") await channel.setConfigOption(choices.configId!, match.value);
      else await channel.setModel(match.value);
      return { requested, applied: true, via: choices.kind, current: match.value };
    } catch (err) {
      const why = (err as { message?: string })?.message ?? String(err);
      return notApplied(requested, choices.current, `the agent refused it: ${why}`);
    }
  }
  if (recipe.selectModel?.env || recipe.selectModel?.args?.length)
    return { requested, applied: true, via: "recipe", ...(choices?.current ? { current: choices.current } : {}) };
  const offered = choices?.values.length ? `; it offers ${choices.values.map((v) => v.value).join(", ")}` : "";
  return notApplied(
    requested,
    choices?.current,
    choices ? `not among the agent's models${offered}` : "the agent offers no model choice",
  );
}

function notApplied(requested: string, current: string | undefined, why: string): ModelChoice {
  return {
    requested,
    applied: false,
    ...(current ? { current } : {}),
    note: `model not applied (agent default: ${current ?? "unknown"}): ${why}`,
  };
}

/** The selection a `session/new` answer offers, config options first. */
export function modelChoices(answer: SessionAnswer): Choices | undefined {
  if (Array.isArray(answer.configOptions)) {
    const opt = answer.configOptions.find(
      (o) => isObject(o) && o.type === "select" && (o.category === "model" || o.id === "model"),
    ) as { id: string; currentValue?: unknown; options?: unknown } | undefined;
    if (opt && typeof opt.id === "string") {
      return {
        kind: "config-option",
        configId: opt.id,
        ...(typeof opt.currentValue === "string" ? { current: opt.currentValue } : {}),
        values: selectValues(opt.options),
      };
    }
  }
  if (isObject(answer.models) && Array.isArray(answer.models.availableModels)) {
    const m = answer.models as { currentModelId?: unknown; availableModels: unknown[] };
    return {
      kind: "set-model",
      ...(typeof m.currentModelId === "string" ? { current: m.currentModelId } : {}),
      values: m.availableModels
        .filter((v): v is { modelId: string; name?: unknown } => isObject(v) && typeof v.modelId === "string")
        .map((v) => ({ value: v.modelId, ...(typeof v.name === "string" ? { name: v.name } : {}) })),
    };
  }
  return undefined;
}

/** A select option list, flat or grouped. */
function selectValues(options: unknown): Array<{ value: string; name?: string }> {
  if (!Array.isArray(options)) return [];
  return options.flatMap((o) =>
    isObject(o) && Array.isArray(o.options)
      ? selectValues(o.options)
      : isObject(o) && typeof o.value === "string"
        ? [{ value: o.value, ...(typeof o.name === "string" ? { name: o.name } : {}) }]
        : [],
  );
}

/** `bin_args` and the environment the recipe's `selectModel` adds for `model`. */
export function spawnModel(
  recipe: AcpRecipe,
  model: string | undefined,
): { args: string[]; env: Record<string, string> } {
  const sel = recipe.selectModel;
  if (model === undefined || !sel) return { args: [], env: {} };
  return {
    args: (sel.args ?? []).map((a) => a.split("{model}").join(model)),
    env: sel.env ? { [sel.env]: model } : {},
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null;
}
