import type { DependencyContainer } from "tsyringe";
import { SvcError } from "../errors.js";
import type { SessionAdapterInstance } from "../plugin-api/sessions.js";
import { pluginInstance } from "../plugin-host/context.js";
import { loadFailureMessage } from "../plugin-host/failure-message.js";
import { PLUGINS, resolve, token } from "../tokens.js";
import type { AdapterSource } from "./types.js";

/** How the session runtime finds adapter plugins (set up through the plugin host). */
export const SESSION_ADAPTERS = token<AdapterLookup>("session-adapters");

/** How the runtime finds adapter plugins; tests may provide their own. */
export interface AdapterLookup {
  /** A loaded adapter plugin of `kind`, and whether it is one of ours (built in). */
  find(kind: string): { builtin: boolean } | undefined;
  instance(kind: string): Promise<SessionAdapterInstance>;
  /** Why an adapter kind is not loaded when its package failed to load (the plugin_load_failed message). */
  failure?(kind: string): string | undefined;
}

/** The lookup over the plugin host's registry. */
export function registryAdapterLookup(c: DependencyContainer): AdapterLookup {
  return {
    find: (kind) => {
      const p = resolve(c, PLUGINS).get("adapter", kind);
      return p ? { builtin: p.source.builtin } : undefined;
    },
    instance: async (kind) => (await pluginInstance(c, "adapter", kind)) as SessionAdapterInstance,
    failure: (kind) => {
      const f = resolve(c, PLUGINS).failureOf("adapter", kind);
      return f && loadFailureMessage("adapter", kind, f);
    },
  };
}

/**
 * Resolves the adapter for a slug in SPEC.md's order: a real `@svc/adapter-<slug>` package
 * (an adapter plugin of that kind loaded from a package), then a config `acpAgents` entry, then
 * the curated ACP catalog. `terminal` is the terminal-presets adapter.
 */
export async function resolveAdapter(lookup: AdapterLookup, slug: string): Promise<{ instance: SessionAdapterInstance; source: AdapterSource }> {
  if (slug === "terminal") return { instance: await lookup.instance("terminal"), source: "terminal" };
  const pkg = lookup.find(slug);
  if (pkg && !pkg.builtin) return { instance: await lookup.instance(slug), source: "package" };
  const failed = lookup.failure?.(slug);
  if (failed) throw new SvcError("plugin_load_failed", failed);
  if (!lookup.find("acp")) throw new SvcError("unavailable", `no ACP adapter plugin is loaded, so adapter "${slug}" cannot start`);
  const acp = await lookup.instance("acp");
  const source = acp.sourceOf?.(slug);
  if (!source) {
    throw new SvcError("not_found", `no adapter "${slug}": no @svc/adapter-${slug} package, no acpAgents.${slug} in the config and no catalog entry; see \`svc acp ls\` or add one with \`svc acp add ${slug} --bin <bin>\``);
  }
  return { instance: acp, source };
}
