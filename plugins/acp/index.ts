import { defineAdapter, SvcError, type SessionAdapterInstance } from "../../core/plugin-api/index.js";
import { startAcpSession } from "./acp-session.js";
import { allRecipes, resolveRecipe } from "./recipes.js";

export { ACP_CATALOG, type AcpRecipe } from "../../core/plugin-api/index.js";
export { resolveRecipe, allRecipes, type ResolvedRecipe } from "./recipes.js";

/**
 * The ACP adapter: starts any command-line agent that speaks the Agent Client Protocol, from a
 * config `acpAgents` entry or the curated catalog.
 */
export default defineAdapter({
  kind: "acp",
  description: "Agents that speak the Agent Client Protocol over stdio (config acpAgents, then the curated catalog)",
  setup(ctx): SessionAdapterInstance {
    const agents = () => ctx.config().acpAgents as Record<string, unknown> | undefined;
    return {
      slugs: () => allRecipes(agents()).map((r) => r.slug),
      sourceOf: (slug) => resolveRecipe(slug, agents())?.source,
      start: async (spec, sink) => {
        const resolved = resolveRecipe(spec.adapter, agents());
        if (!resolved) throw new SvcError("not_found", `no ACP agent "${spec.adapter}" in acpAgents or the catalog`);
        ctx.logger.debug("starting ACP agent", { sessionId: spec.sessionId, adapter: spec.adapter, source: resolved.source, bin: resolved.recipe.bin });
        const config = ctx.config();
        const dirs = { svcHome: ctx.home, worktreesRoot: config.worktrees?.root as string | undefined, eventsDir: config.sessions?.eventsDir as string | undefined };
        return startAcpSession(spec, resolved, sink, dirs);
      },
    };
  },
});
