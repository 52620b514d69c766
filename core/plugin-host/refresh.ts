/**
 * Packages added or upgraded while the daemon runs (`svc adapters install`): when a plugin is
 * looked up and missing, {@link PackageRefresh.refresh} resolves the ids of config `adapters` as
 * config.json lists them now and loads, into the daemon's registry, only the packages it has not
 * loaded from that directory at that version (and not tried at that fingerprint). Calls are
 * serialized; when nothing changed it costs a read of config.json and one resolve per listed
 * package, and no plugin code runs.
 *
 * Only `adapter` and `redactor` plugins are taken from such a package: they are looked up at each
 * use. Providers and targets are wired into the sentinel engine at start, so theirs still need a
 * restart (docs/architecture.md, "Adapters without a restart").
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../runtime/logger.js";
import { token } from "../tokens.js";
import { failureLine, importPackage } from "./load.js";
import { resolutionBases } from "./locations.js";
import { PhaseError } from "./manifest.js";
import type { PluginRegistry, PluginType } from "./registry.js";
import { resolvePackage } from "./resolve-package.js";
import { scanPackages } from "./scan.js";

/** The types a refresh loads from a new package. */
export const LIVE_TYPES: readonly PluginType[] = ["adapter", "redactor"];

export interface RefreshOptions {
  registry: PluginRegistry;
  /** The package ids of config `adapters` as config.json lists them now. */
  ids(): Promise<readonly string[]>;
  env: NodeJS.ProcessEnv;
  cwd: string;
  logger?: Logger;
}

export class PackageRefresh {
  /** Fingerprints of the packages tried by a refresh (loaded or failed), by id. */
  private readonly tried = new Map<string, string>();
  private running: Promise<string[]> | undefined;
  private queued: Promise<string[]> | undefined;

  constructor(private readonly o: RefreshOptions) {}

  /**
   * Loads what was added or upgraded since the last look; resolves to the ids it (re)loaded. One
   * refresh at a time: a call during one waits for the next, so it sees the disk as it is now.
   */
  refresh(): Promise<string[]> {
    if (!this.running) {
      this.running = this.run().finally(() => (this.running = undefined));
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => [])
      .then(() => {
        this.queued = undefined;
        return this.refresh();
      });
    return this.queued;
  }

  private async run(): Promise<string[]> {
    const { registry, env, cwd, logger } = this.o;
    const bases = resolutionBases(env, cwd);
    const changed: string[] = [];
    for (const id of new Set(await this.o.ids())) {
      const print = fingerprint(id, bases);
      if (print === undefined || this.tried.get(id) === print || this.loadedAsIs(id, print)) continue;
      this.tried.set(id, print);
      changed.push(id);
    }
    if (changed.length === 0) return [];
    const { packages, failures } = scanPackages({ ids: changed, bases, builtins: false });
    for (const pkg of packages) {
      try {
        // A package this process imported before (an upgrade, or a fix of one that failed) is
        // imported under a new URL: Node keeps the first module of a URL for the life of the process.
        const seen =
          registry.list().some((p) => p.source.package === pkg.label) ||
          registry.failures.some((f) => f.package === pkg.label);
        const plugins = await importPackage(pkg, seen ? this.tried.get(pkg.label) : undefined);
        for (const p of plugins.filter((p) => LIVE_TYPES.includes(p.type))) registry.replace(p);
        logger?.info(`adapter package ${pkg.label} loaded while running`, {
          package: pkg.label,
          plugins: plugins
            .filter((p) => LIVE_TYPES.includes(p.type))
            .map((p) => `${p.type}:${p.kind}`)
            .join(", "),
        });
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
    for (const f of failures) {
      registry.fail(f);
      logger?.warn(failureLine(f), { package: f.package, phase: f.phase });
    }
    return changed;
  }

  /** True when the registry already holds a plugin of package `id` from the same directory and version (loaded at start). */
  private loadedAsIs(id: string, print: string): boolean {
    const loaded = this.o.registry.list().find((p) => p.source.package === id);
    if (!loaded) return false;
    const same = `${loaded.source.dir}@${loaded.source.version ?? ""}` === print.slice(0, print.lastIndexOf("#"));
    if (same) this.tried.set(id, print);
    return same;
  }
}

/** Where package `id` resolves now and at which version, with its package.json's mtime: `dir@version#mtime`; `undefined` when it does not resolve. */
function fingerprint(id: string, bases: ReturnType<typeof resolutionBases>): string | undefined {
  try {
    const pkg = resolvePackage(id, bases);
    const version = typeof pkg.packageJson.version === "string" ? pkg.packageJson.version : "";
    return `${pkg.dir}@${version}#${statSync(join(pkg.dir, "package.json")).mtimeMs}`;
  } catch {
    return undefined;
  }
}

/** The daemon's refresh (registered by the plugin-host module). */
export const PLUGIN_REFRESH = token<PackageRefresh>("plugin-refresh");
