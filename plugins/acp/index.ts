import {
  defineAdapter,
  SvcError,
  type SessionAdapterInstance,
  type SessionResumeSpec,
  type SessionStartSpec,
  type SessionUpdateSink,
} from "../../core/plugin-api/index.js";
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
    const start = (spec: SessionStartSpec | SessionResumeSpec, sink: SessionUpdateSink) => {
      const resolved = resolveRecipe(spec.adapter, agents());
      if (!resolved) throw new SvcError("not_found", `no ACP agent "${spec.adapter}" in acpAgents or the catalog`);
      ctx.logger.debug("starting ACP agent", {
        sessionId: spec.sessionId,
        adapter: spec.adapter,
        source: resolved.source,
        bin: resolved.recipe.bin,
        ...("agentSessionId" in spec ? { resume: true } : {}),
      });
      const config = ctx.config();
      const dirs = {
        svcHome: ctx.home,
        worktreesRoot: config.worktrees?.root as string | undefined,
        eventsDir: config.sessions?.eventsDir as string | undefined,
      };
      // The ACP SDK (and its zod schemas) loads when the first ACP session starts.
      return import("./acp-session.js").then(({ startAcpSession }) => startAcpSession(spec, resolved, sink, dirs));
    };
    return {
      slugs: () => allRecipes(agents()).map((r) => r.slug),
      sourceOf: (slug) => resolveRecipe(slug, agents())?.source,
      notResumable: (slug) => {
        const resolved = resolveRecipe(slug, agents());
        if (!resolved) return `no ACP agent "${slug}" in acpAgents or the catalog any more`;
        return resolved.recipe.resumable === true ? undefined : notResumableReason(slug, resolved.source);
      },
      start: (spec, sink) => start(spec, sink),
      resume: (spec, sink) => {
        const resolved = resolveRecipe(spec.adapter, agents());
        if (resolved && resolved.recipe.resumable !== true)
          throw new SvcError("not_resumable", notResumableReason(spec.adapter, resolved.source));
        return start(spec, sink);
      },
    };
  },
});

/** Why an agent's sessions cannot be resumed, and how to allow it. */
function notResumableReason(slug: string, source: "config" | "catalog"): string {
  const how = `set acpAgents.${slug}.resumable: true (svc config set acpAgents.${slug}.resumable true) if the agent supports ACP session/load`;
  return source === "config"
    ? `ACP agent "${slug}" is not marked resumable: ${how}`
    : `ACP agent "${slug}" comes from the catalog, which does not mark it resumable: add an acpAgents.${slug} entry and ${how}`;
}
