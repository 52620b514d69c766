/**
 * Packages added or upgraded while the daemon runs (`svc adapters install`): when a plugin is
 * looked up and missing, {@link PackageRefresh.refresh} resolves the ids of config `adapters` as
 * config.json lists them now and loads, into the daemon's registry, only the packages it has not
 * loaded from that directory at that version (and not tried at that fingerprint). Calls are
 * serialized; when nothing changed it costs a read of config.json and one resolve per listed
 * package, and no plugin code runs.
 *
 * A package removed the same way (`svc adapters rm`: no longer listed, or no longer resolving) is
 * dropped from the registry at the same moment, so the next lookup no longer finds it; a built-in
 * it had replaced serves again, and sessions it started keep their instance.
 *
 * Only `adapter` and `redactor` plugins are taken from (and dropped with) such a package: they are
 * looked up at each use. Providers and targets are wired into the sentinel engine at start, so
 * theirs still need a restart (docs/architecture.md, "Packages installed while the daemon runs").
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
import { BUILTIN_PACKAGE, scanPackages } from "./scan.js";

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
  /** Packages dropped since they were removed: one installed again is imported under a new URL. */
  private readonly removed = new Set<string>();
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
    const listed = new Set(await this.o.ids());
    const present = new Set<string>();
    for (const id of listed) {
      const print = fingerprint(id, bases);
      if (print !== undefined) present.add(id);
      if (print === undefined || this.tried.get(id) === print || this.loadedAsIs(id, print)) continue;
      this.tried.set(id, print);
      changed.push(id);
    }
    this.dropRemoved(listed, present);
    if (changed.length === 0) return [];
    const { packages, failures } = scanPackages({ ids: changed, bases, builtins: false });
    for (const pkg of packages) {
      try {
        // A package this process imported before (an upgrade, or a fix of one that failed) is
        // imported under a new URL: Node keeps the first module of a URL for the life of the process.
        const seen =
          this.removed.has(pkg.label) ||
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

  /**
   * Drops the live plugins of the packages that are no longer listed and resolving (`present`),
   * and the load failures of those no longer listed (`listed`; a built-in's stay).
   */
  private dropRemoved(listed: ReadonlySet<string>, present: ReadonlySet<string>): void {
    const { registry, logger } = this.o;
    for (const pkg of registry.packagesOf(LIVE_TYPES)) {
      if (present.has(pkg)) continue;
      const dropped = registry.removePackage(pkg, LIVE_TYPES);
      this.tried.delete(pkg);
      this.removed.add(pkg);
      if (dropped.length)
        logger?.info(`adapter package ${pkg} removed while running`, {
          package: pkg,
          plugins: dropped.map((p) => `${p.type}:${p.kind}`).join(", "),
        });
    }
    for (const { package: pkg } of [...registry.failures]) {
      if (listed.has(pkg) || pkg.startsWith(`${BUILTIN_PACKAGE} (`)) continue;
      registry.forgetFailures(pkg);
      this.tried.delete(pkg);
      this.removed.add(pkg);
    }
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
