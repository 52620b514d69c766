import type { DependencyContainer } from "tsyringe";
import { SvcError } from "../errors.js";
import type { SessionAdapterInstance } from "../plugin-api/sessions.js";
import { pluginInstance } from "../plugin-host/context.js";
import { loadFailureMessage } from "../plugin-host/failure-message.js";
import { refreshPlugins } from "../plugin-host/lookup.js";
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
  /** Picks up adapter packages installed or upgraded since the daemon started (core/plugin-host/refresh.ts). */
  refresh?(): Promise<void>;
  /** The adapter kinds third-party packages provide, with their package. */
  packages?(): Array<{ kind: string; package: string }>;
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
    refresh: () => refreshPlugins(c),
    packages: () =>
      resolve(c, PLUGINS)
        .list("adapter")
        .filter((p) => !p.source.builtin)
        .map((p) => ({ kind: p.kind, package: p.source.package })),
  };
}

/**
 * Resolves the adapter for a slug in SPEC.md's order: a real `@svc/adapter-<slug>` package
 * (an adapter plugin of that kind loaded from a package), then a config `acpAgents` entry, then
 * the curated ACP catalog. `terminal` is the terminal-presets adapter.
 */
export async function resolveAdapter(
  lookup: AdapterLookup,
  slug: string,
): Promise<{ instance: SessionAdapterInstance; source: AdapterSource }> {
  if (slug === "terminal") return { instance: await lookup.instance("terminal"), source: "terminal" };
  await lookup.refresh?.();
  const pkg = lookup.find(slug);
  if (pkg && !pkg.builtin) return { instance: await lookup.instance(slug), source: "package" };
  const failed = lookup.failure?.(slug);
  if (failed) throw new SvcError("plugin_load_failed", failed);
  if (!lookup.find("acp"))
    throw new SvcError("unavailable", `no ACP adapter plugin is loaded, so adapter "${slug}" cannot start`);
  const acp = await lookup.instance("acp");
  const source = acp.sourceOf?.(slug);
  if (!source) {
    throw new SvcError(
      "not_found",
      `no adapter "${slug}": no @svc/adapter-${slug} package, no acpAgents.${slug} in the config and no catalog entry; ${await available(lookup, acp)}; see \`svc acp ls\` or add one with \`svc acp add ${slug} --bin <bin>\``,
    );
  }
  return { instance: acp, source };
}

/** What can be started instead: the adapter kinds of installed packages, the acpAgents entries and the catalog. */
async function available(lookup: AdapterLookup, acp: SessionAdapterInstance): Promise<string> {
  const pkgs = lookup.packages?.() ?? [];
  const slugs = (await Promise.resolve(acp.slugs?.()).catch(() => undefined)) ?? [];
  const from = (src: "config" | "catalog") => slugs.filter((s) => acp.sourceOf?.(s) === src).sort();
  const list = (xs: string[]) => xs.join(", ") || "(none)";
  return `available: packages ${list(pkgs.map((p) => `${p.kind} (${p.package})`))}; acpAgents ${list(from("config"))}; catalog ${list(from("catalog"))}`;
}
