/**
 * Which adapter runs a step when the step names none, chosen from its resolved model:
 * 1. an `acpAgents` entry whose `models.default` is the model or whose `models.allowed` lists it
 *    (in the config's key order): the user said that agent runs that model;
 * 2. the model catalog (core/config/model-catalog.ts): the model's provider's adapter
 *    (anthropic → claude, openai → codex, gemini → gemini);
 * 3. otherwise none fits, and the step cannot start (it fails, its dependents are skipped).
 */
import type { AcpRecipe } from "../config/acp-catalog.js";
import { catalogAdapterFor } from "../config/model-catalog.js";

export interface AdapterChoice {
  slug?: string;
  /** Who chose it: the step itself, an acpAgents entry's models, or the model catalog. */
  chosenBy?: "step" | "acpAgents" | "catalog";
  why?: string;
  problem?: string;
}

export function chooseAdapter(
  stepAdapter: string | undefined,
  model: string | undefined,
  acpAgents: Record<string, AcpRecipe>,
  stepId: string,
): AdapterChoice {
  if (stepAdapter) return { slug: stepAdapter, chosenBy: "step", why: `steps[${stepId}].adapter` };
  if (!model) return {};
  for (const [slug, recipe] of Object.entries(acpAgents)) {
    if (recipe.models?.default === model || recipe.models?.allowed?.includes(model)) {
      return { slug, chosenBy: "acpAgents", why: `acpAgents.${slug}.models lists ${model}` };
    }
  }
  const cat = catalogAdapterFor(model);
  if (cat)
    return {
      slug: cat.adapter,
      chosenBy: "catalog",
      why: `model catalog: ${model} is a ${cat.provider} model, run by ${cat.adapter}`,
    };
  return {
    problem:
      `no adapter fits model "${model}": it is not in the model catalog and no acpAgents entry lists it in models.default or models.allowed; ` +
      `give steps[${stepId}].adapter, or list the model under acpAgents.<slug>.models.allowed`,
  };
}
