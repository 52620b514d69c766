import { ACP_CATALOG, AGENT_TRAITS, type AcpRecipe } from "../../core/plugin-api/index.js";

export interface ResolvedRecipe {
  slug: string;
  source: "config" | "catalog";
  recipe: AcpRecipe;
  /** The catalog entry this config entry shadows. */
  shadows?: "catalog";
}

/**
 * The recipe for `slug`: a config `acpAgents` entry shadows the catalog entry of the same slug
 * (keeping what the catalog knows of the agent, {@link AGENT_TRAITS}, where the entry does not say).
 */
export function resolveRecipe(
  slug: string,
  acpAgents: Record<string, unknown> | undefined,
): ResolvedRecipe | undefined {
  const fromConfig = acpAgents?.[slug];
  if (isRecipe(fromConfig)) {
    // The agent behind a shadowed slug still reads its key from the catalog's variable, and so on.
    const known = ACP_CATALOG[slug];
    const recipe: AcpRecipe = { ...fromConfig };
    for (const trait of AGENT_TRAITS)
      if (recipe[trait] === undefined && known?.[trait] !== undefined) Object.assign(recipe, { [trait]: known[trait] });
    return { slug, source: "config", recipe, ...(ACP_CATALOG[slug] ? { shadows: "catalog" as const } : {}) };
  }
  const fromCatalog = ACP_CATALOG[slug];
  return fromCatalog ? { slug, source: "catalog", recipe: fromCatalog } : undefined;
}

/** Every slug the ACP adapter can start, config entries first. */
export function allRecipes(acpAgents: Record<string, unknown> | undefined): ResolvedRecipe[] {
  const slugs = new Set([
    ...Object.keys(acpAgents ?? {}).filter((s) => isRecipe(acpAgents![s])),
    ...Object.keys(ACP_CATALOG),
  ]);
  return [...slugs].map((s) => resolveRecipe(s, acpAgents)!);
}

function isRecipe(v: unknown): v is AcpRecipe {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as { bin?: unknown }).bin === "string" &&
    (v as { bin: string }).bin !== ""
  );
}
