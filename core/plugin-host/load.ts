/**
 * Loading plugins into the registry: scan (resolve → manifest → validate → host range), then per
 * package import → shape check. A failing package is recorded in `registry.failures` and is absent;
 * everything else loads. Setup happens later, on first use ({@link pluginInstance}).
 */
import { join } from "node:path";
import { providePluginApi } from "./plugin-api-provider.js";
import { pathToFileURL } from "node:url";
import type { AnyPlugin } from "../plugin-api/index.js";
import type { Logger } from "../runtime/logger.js";
import { PhaseError } from "./manifest.js";
import type { LoadedPlugin, LoadFailure, PluginRegistry } from "./registry.js";
import { BUILTIN_PACKAGE, scanPackages, type ScannedPackage, type ScanOptions } from "./scan.js";

/**
 * Imports every entry of a scanned package and checks each default export's shape. `version`
 * tags the module URLs, so a package imported before is imported afresh.
 */
export async function importPackage(pkg: ScannedPackage, version?: string): Promise<LoadedPlugin[]> {
  // Built-in plugins import the API by relative path; only a package's plugins need the hooks, whose
  // loader thread (a V8 isolate of its own) costs RSS for as long as the process lives.
  if (!pkg.source.builtin) providePluginApi();
  const out: LoadedPlugin[] = [];
  for (const decl of pkg.manifest.plugins) {
    const file = join(pkg.source.dir, decl.entry);
    let mod: { default?: unknown };
    try {
      const url = pathToFileURL(file);
      if (version !== undefined) url.searchParams.set("svc-load", version);
      mod = (await import(url.href)) as { default?: unknown };
    } catch (err) {
      throw new PhaseError(
        "import",
        `importing ${decl.entry} (${decl.type} ${decl.kind}) failed: ${(err as Error).message}`,
      );
    }
    const problem = shapeProblem(mod.default, decl.type, decl.kind);
    if (problem) throw new PhaseError("shape", `${decl.entry}: ${problem}`);
    out.push({
      type: decl.type,
      kind: decl.kind,
      ...(decl.description !== undefined ? { description: decl.description } : {}),
      definition: mod.default as AnyPlugin,
      source: pkg.source,
    });
  }
  return out;
}

const DEFINE = {
  adapter: "defineAdapter",
  provider: "defineProvider",
  target: "defineTarget",
  redactor: "defineRedactor",
} as const;

/** Why a default export is not a plugin of the declared type and kind; `undefined` when it is. */
export function shapeProblem(value: unknown, type: LoadedPlugin["type"], kind: string): string | undefined {
  const fix =
    type === "redactor"
      ? `default-export defineRedactor({ kind: "${kind}", redact(text, ctx) { … } })`
      : `default-export ${DEFINE[type]}({ kind: "${kind}", setup(ctx) { … } })`;
  if (typeof value !== "object" || value === null) return `has no default export object; ${fix}`;
  const v = value as Record<string, unknown>;
  if (v.type !== type)
    return `default export has type ${JSON.stringify(v.type)}, the manifest declares "${type}"; ${fix}`;
  if (v.kind !== kind) return `default export has kind ${JSON.stringify(v.kind)}, the manifest declares "${kind}"`;
  if (type === "redactor")
    return typeof v.redact === "function" ? undefined : `default export has no redact(text, ctx) function; ${fix}`;
  if (typeof v.setup !== "function") return `default export has no setup(ctx) function; ${fix}`;
  return undefined;
}

/**
 * Why what an adapter's `setup` returned is not an `AdapterInstance` (the contract the session
 * runtime calls); `undefined` when it is. Providers and targets are not checked here.
 */
export function instanceProblem(instance: unknown, type: LoadedPlugin["type"], kind: string): string | undefined {
  if (type !== "adapter") return undefined;
  const fix = "return { start(spec, sink) { … }, slugs?(), sourceOf?(slug) } (see AdapterInstance in svc/plugin-api)";
  if (typeof instance !== "object" || instance === null)
    return `setup of adapter "${kind}" returned ${instance === null ? "null" : typeof instance}, not an object; ${fix}`;
  const v = instance as Record<string, unknown>;
  if (typeof v.start !== "function") return `setup of adapter "${kind}" returned no start(spec, sink) function; ${fix}`;
  for (const m of ["slugs", "sourceOf"] as const) {
    if (v[m] !== undefined && typeof v[m] !== "function")
      return `setup of adapter "${kind}" returned ${m} that is not a function; ${fix}`;
  }
  return undefined;
}

/** Scans and loads built-ins then `options.ids` into `registry`; returns this run's failures. */
export async function loadPlugins(
  registry: PluginRegistry,
  options: ScanOptions & { logger?: Logger },
): Promise<LoadFailure[]> {
  const { packages, failures } = scanPackages(options);
  for (const pkg of packages) {
    try {
      for (const plugin of await importPackage(pkg)) registry.add(plugin);
    } catch (err) {
      const declares = pkg.manifest.plugins.map((p) => ({ type: p.type, kind: p.kind }));
      failures.push({
        package: pkg.label,
        phase: err instanceof PhaseError ? err.phase : "import",
        error: (err as Error).message,
        declares,
      });
    }
  }
  const ordered = inListedOrder(failures, options.ids);
  for (const f of ordered) {
    registry.fail(f);
    options.logger?.warn(failureLine(f), { package: f.package, phase: f.phase });
  }
  return ordered;
}

/** Failures in the order the packages load: built-ins, then `ids`. */
export function inListedOrder(failures: LoadFailure[], ids: readonly string[]): LoadFailure[] {
  const order = (f: LoadFailure) => (f.package.startsWith(`${BUILTIN_PACKAGE} (`) ? -1 : ids.indexOf(f.package));
  return [...failures].sort((a, b) => order(a) - order(b));
}

/** The one warning line for a failed package. */
export function failureLine(f: LoadFailure): string {
  return `adapter package ${f.package} not loaded (${f.phase}): ${f.error}`;
}
