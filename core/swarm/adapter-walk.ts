/**
 * The walk of `config.adapters` at the start of every run (SPEC.md `adapters`): the built-ins, then
 * the packages in array order, through the same loader and load report as at daemon start
 * (core/plugin-host/load.ts) into a registry of the run's own. A package installed since the daemon
 * started is therefore used without a restart; a package that fails to load is in the run's load
 * report, and fails only the steps whose adapter it would have provided.
 */
import { ACP_CATALOG } from "../config/acp-catalog.js";
import type { AcpRecipe } from "../config/acp-catalog.js";
import { failureLine, loadPlugins } from "../plugin-host/load.js";
import { readRawManifest } from "../plugin-host/manifest.js";
import { resolutionBases } from "../plugin-host/locations.js";
import { PluginRegistry, type LoadFailure } from "../plugin-host/registry.js";
import { resolvePackage } from "../plugin-host/resolve-package.js";
import type { Logger } from "../runtime/logger.js";

export interface AdapterWalk {
  registry: PluginRegistry;
  /** The run's load report: every package that failed, in load order. */
  failures: LoadFailure[];
  /** Adapter kinds each failed package declares, when its manifest could be read. */
  declared: Map<string, string[]>;
}

/** Loads the built-ins and `ids` afresh into a new registry. */
export async function walkAdapters(
  ids: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  logger?: Logger,
): Promise<AdapterWalk> {
  const registry = new PluginRegistry();
  const failures = await loadPlugins(registry, { ids, env, cwd, ...(logger ? { logger } : {}) });
  const bases = resolutionBases(env, cwd);
  const declared = new Map<string, string[]>();
  for (const f of failures) declared.set(f.package, declaredAdapterKinds(f.package, bases));
  return { registry, failures, declared };
}

function declaredAdapterKinds(id: string, bases: ReturnType<typeof resolutionBases>): string[] {
  try {
    const pkg = resolvePackage(id, bases);
    const raw = readRawManifest(pkg.dir, pkg.packageJson)?.raw as
      | { plugins?: Array<{ type?: unknown; kind?: unknown }> }
      | undefined;
    return (raw?.plugins ?? [])
      .filter((p) => p.type === "adapter" && typeof p.kind === "string")
      .map((p) => p.kind as string);
  } catch {
    return [];
  }
}

/** The failed package a step with adapter `slug` needs: one declaring that adapter kind, or named `@svc/adapter-<slug>` / `…adapter-<slug>`. */
export function failureFor(walk: AdapterWalk, slug: string): LoadFailure | undefined {
  return [...walk.failures].reverse().find((f) => {
    if (walk.declared.get(f.package)?.includes(slug)) return true;
    const bare = f.package.replace(/^@[^/]+\//, "");
    return bare === `adapter-${slug}` || bare.endsWith(`-adapter-${slug}`);
  });
}

export type AdapterAvailability =
  | { source: "package"; package: string }
  | { source: "config" | "catalog"; bin: string }
  | { problem: string };

/** Where adapter `slug` comes from in this run (SPEC.md order: package, then acpAgents, then the catalog), or why the step cannot start. */
export function adapterAvailability(
  walk: AdapterWalk,
  slug: string,
  acpAgents: Record<string, AcpRecipe>,
): AdapterAvailability {
  if (slug === "terminal")
    return { problem: `adapter "terminal" runs a command, not an agent; a swarm step needs an agent adapter` };
  const failed = failureFor(walk, slug);
  if (failed) return { problem: `adapter "${slug}" is unavailable in this run: ${failureLine(failed)}` };
  const pkg = walk.registry.get("adapter", slug);
  if (pkg && !pkg.source.builtin) return { source: "package", package: pkg.source.package };
  if (Object.hasOwn(acpAgents, slug)) return { source: "config", bin: acpAgents[slug]!.bin };
  if (Object.hasOwn(ACP_CATALOG, slug)) return { source: "catalog", bin: ACP_CATALOG[slug]!.bin };
  return {
    problem: `no adapter "${slug}": no adapter package provides it, no acpAgents.${slug} in the config and no catalog entry; see \`svc acp ls\``,
  };
}
