/**
 * The registry of loaded plugins, keyed by (type, kind). A later plugin of the same key replaces
 * the earlier one; each replacement is recorded in {@link PluginRegistry.shadowed}. That rule is
 * {@link KindTable}, which `svc adapters ls` and `svc acp ls` use on declared plugins too.
 */
import type { AnyPlugin } from "../plugin-api/index.js";
import type { AdapterInstance } from "../plugin-api/adapter.js";
import type { ProviderInstance } from "../plugin-api/provider.js";
import type { TargetInstance } from "../plugin-api/target.js";
import { SvcError } from "../errors.js";
import { loadFailureMessage } from "./failure-message.js";

export type PluginType = AnyPlugin["type"];

export interface PluginSource {
  /** Package id as listed in `adapters` (or `svc` for built-ins). */
  package: string;
  builtin: boolean;
  /** A built-in's name: its manifest's under manifests/builtin (`acp`, `agentpush`, …); each is a package of its own. */
  name?: string;
  /** Where the package resolved: `builtin`, `install` (the tool's install location) or `cwd`. */
  resolvedFrom: "builtin" | "install" | "svc" | "cwd";
  /** The package's root directory. */
  dir: string;
  version?: string;
}

export interface LoadedPlugin {
  type: PluginType;
  kind: string;
  description?: string;
  definition: AnyPlugin;
  source: PluginSource;
}

export interface ShadowRecord {
  type: PluginType;
  kind: string;
  winner: PluginSource;
  loser: PluginSource;
}

export interface LoadFailure {
  package: string;
  phase: "resolve" | "manifest" | "validate" | "host-range" | "import" | "shape" | "setup";
  error: string;
  /** The plugins the package's manifest declares, when it was read (a failed import or shape check). */
  declares?: Array<{ type: PluginType; kind: string }>;
}

type InstanceOf<T extends PluginType> = T extends "provider"
  ? ProviderInstance
  : T extends "target"
    ? TargetInstance
    : AdapterInstance;

const key = (type: string, kind: string) => `${type}:${kind}`;

/** Anything a package provides under a (type, kind): a loaded plugin, or one its manifest declares. */
export interface KindEntry {
  type: PluginType;
  kind: string;
  source: PluginSource;
}

/**
 * Entries by (type, kind), the last one added winning (DESIGN.md, Loading): a later entry of the
 * same key replaces the earlier one, and each replacement is recorded in {@link KindTable.shadowed}.
 */
export class KindTable<T extends KindEntry> {
  /** Every entry of each key, in the order added: the last one serves. */
  private readonly entries = new Map<string, T[]>();
  readonly shadowed: ShadowRecord[] = [];

  constructor(entries: Iterable<T> = []) {
    for (const e of entries) this.add(e);
  }

  add(entry: T): void {
    const k = key(entry.type, entry.kind);
    const stack = this.entries.get(k);
    const prior = stack?.at(-1);
    if (prior) this.shadowed.push({ type: entry.type, kind: entry.kind, winner: entry.source, loser: prior.source });
    if (stack) stack.push(entry);
    else this.entries.set(k, [entry]);
  }

  get(type: PluginType, kind: string): T | undefined {
    return this.entries.get(key(type, kind))?.at(-1);
  }

  /** The winners, in the order their (type, kind) was first seen. */
  list(): T[] {
    return [...this.entries.values()].map((stack) => stack.at(-1)!);
  }

  /** Every entry, those replaced by a later one included. */
  all(): T[] {
    return [...this.entries.values()].flat();
  }

  /**
   * Drops the entries `drop` selects (a package removed); the latest entry left of each key
   * serves again (a built-in the package had replaced). Returns the winners dropped.
   */
  remove(drop: (entry: T) => boolean): T[] {
    const winners: T[] = [];
    const dropped = new Set<PluginSource>();
    for (const [k, stack] of this.entries) {
      const kept = stack.filter((e) => !drop(e));
      if (kept.length === stack.length) continue;
      for (const e of stack) if (drop(e)) dropped.add(e.source);
      if (drop(stack.at(-1)!)) winners.push(stack.at(-1)!);
      if (kept.length) this.entries.set(k, kept);
      else this.entries.delete(k);
    }
    // A replacement that involved a dropped entry is no longer true.
    const left = this.shadowed.filter((r) => !dropped.has(r.winner) && !dropped.has(r.loser));
    this.shadowed.splice(0, this.shadowed.length, ...left);
    return winners;
  }
}

/** How long a failed setup stands before the next use of the plugin tries it again. */
export const SETUP_RETRY_AFTER_MS = 60_000;

/** What {@link PluginRegistry.instance} tells the setup it runs. */
export interface SetupAttempt {
  /** True when an earlier setup of this plugin failed and has not succeeded since (the failure is already recorded). */
  retry: boolean;
}

export class PluginRegistry {
  private readonly plugins = new KindTable<LoadedPlugin>();
  private readonly instances = new Map<string, Promise<unknown>>();
  /** Failed setups, by key: when the attempt failed and its rejected promise (served until the retry is due). */
  private readonly setupFailures = new Map<string, { at: number; rejected: Promise<unknown> }>();
  readonly failures: LoadFailure[] = [];
  /** Instances of plugins since replaced ({@link replace}), still to be stopped at shutdown. */
  private readonly retired: Array<{ type: PluginType; kind: string; instance: Promise<unknown> }> = [];

  /** Every replacement of a plugin by a later one of the same (type, kind). */
  get shadowed(): readonly ShadowRecord[] {
    return this.plugins.shadowed;
  }

  add(plugin: LoadedPlugin): void {
    this.plugins.add(plugin);
  }

  /**
   * Adds a plugin loaded while the daemon runs (core/plugin-host/refresh.ts). One that replaces a
   * plugin of the same (type, kind) is set up afresh at its next use; the instance of the one it
   * replaced is kept for shutdown (sessions it started keep it).
   */
  replace(plugin: LoadedPlugin): void {
    const k = key(plugin.type, plugin.kind);
    const prior = this.instances.get(k);
    if (prior) this.retired.push({ type: plugin.type, kind: plugin.kind, instance: prior });
    this.instances.delete(k);
    this.setupFailures.delete(k);
    this.plugins.add(plugin);
  }

  /**
   * Drops the plugins of `types` that package `pkg` provided (it was removed while the daemon runs:
   * refresh.ts); a built-in it had replaced serves again. An instance set up is kept for shutdown
   * (sessions it started keep it). Returns the plugins that were serving.
   */
  removePackage(pkg: string, types: readonly PluginType[]): LoadedPlugin[] {
    const dropped = this.plugins.remove((p) => !p.source.builtin && p.source.package === pkg && types.includes(p.type));
    for (const p of dropped) {
      const k = key(p.type, p.kind);
      const inst = this.instances.get(k);
      if (inst) this.retired.push({ type: p.type, kind: p.kind, instance: inst });
      this.instances.delete(k);
      this.setupFailures.delete(k);
    }
    return dropped;
  }

  /** Drops the load failures of package `pkg` (no longer listed: refresh.ts). */
  forgetFailures(pkg: string): void {
    const kept = this.failures.filter((f) => f.package !== pkg);
    this.failures.splice(0, this.failures.length, ...kept);
  }

  /** The packages (not built-ins) that provided a plugin of `types`, replaced ones included. */
  packagesOf(types: readonly PluginType[]): Set<string> {
    return new Set(
      this.plugins
        .all()
        .filter((p) => !p.source.builtin && types.includes(p.type))
        .map((p) => p.source.package),
    );
  }

  /** How many built-in packages (one per manifests/builtin file) have a plugin loaded, replaced ones included. */
  builtinPackageCount(): number {
    const names = this.plugins
      .all()
      .filter((p) => p.source.builtin)
      .map((p) => p.source.name ?? p.source.package);
    return new Set(names).size;
  }

  fail(failure: LoadFailure): void {
    this.failures.push(failure);
  }

  /** Why a plugin some package declares is not loaded: that package's load failure, if any. */
  failureOf(type: PluginType, kind: string): LoadFailure | undefined {
    if (this.get(type, kind)) return undefined;
    return this.failures.findLast((f) => f.declares?.some((d) => d.type === type && d.kind === kind));
  }

  /** The built-in a package replaced for (type, kind): the package now serving it, if any. */
  replacerOf(type: PluginType, kind: string): string | undefined {
    const winner = this.get(type, kind);
    if (!winner || winner.source.builtin) return undefined;
    return this.shadowed.some((s) => s.type === type && s.kind === kind && s.loser.builtin)
      ? winner.source.package
      : undefined;
  }

  get(type: PluginType, kind: string): LoadedPlugin | undefined {
    return this.plugins.get(type, kind);
  }

  list(type?: PluginType): LoadedPlugin[] {
    return this.plugins.list().filter((p) => !type || p.type === type);
  }

  kinds(type: PluginType): string[] {
    return this.list(type).map((p) => p.kind);
  }

  /**
   * The set-up instance of a plugin (setup runs once, on first use, with the context the host
   * makes). Throws `not_found` naming the loaded kinds when there is no such plugin, or
   * `plugin_load_failed` when a package declaring it failed to load. A failed setup
   * is not re-run on every use: its rejection is served for {@link SETUP_RETRY_AFTER_MS} (by `now`),
   * then the next use tries again, telling `setup` it is a retry.
   */
  instance<T extends PluginType>(
    type: T,
    kind: string,
    setup: (plugin: LoadedPlugin, attempt: SetupAttempt) => Promise<unknown>,
    now: () => number = Date.now,
  ): Promise<InstanceOf<T>> {
    const k = key(type, kind);
    const inst = this.instances.get(k);
    if (inst) return inst as Promise<InstanceOf<T>>;
    const failed = this.setupFailures.get(k);
    if (failed && now() - failed.at < SETUP_RETRY_AFTER_MS) return failed.rejected as Promise<InstanceOf<T>>;
    const plugin = this.plugins.get(type, kind);
    if (!plugin) {
      const failure = this.failureOf(type, kind);
      if (failure) return Promise.reject(new SvcError("plugin_load_failed", loadFailureMessage(type, kind, failure)));
      const loaded = this.kinds(type);
      return Promise.reject(
        new SvcError(
          "not_found",
          `no ${type} plugin of kind "${kind}"; loaded ${type} kinds: ${loaded.join(", ") || "(none)"}`,
        ),
      );
    }
    const attempt = setup(plugin, { retry: failed !== undefined });
    this.instances.set(k, attempt);
    attempt.then(
      () => this.setupFailures.delete(k),
      () => {
        if (this.instances.get(k) === attempt) this.instances.delete(k);
        this.setupFailures.set(k, { at: now(), rejected: attempt });
      },
    );
    return attempt as Promise<InstanceOf<T>>;
  }

  /** Instances already set up, for orderly shutdown. */
  async setUpInstances(): Promise<Array<{ type: PluginType; kind: string; instance: unknown }>> {
    const out: Array<{ type: PluginType; kind: string; instance: unknown }> = [];
    for (const [k, p] of this.instances) {
      const [type, kind] = k.split(/:(.*)/s) as [PluginType, string];
      const instance = await p.catch(() => undefined);
      if (instance) out.push({ type, kind, instance });
    }
    for (const r of this.retired) {
      const instance = await r.instance.catch(() => undefined);
      if (instance) out.push({ type: r.type, kind: r.kind, instance });
    }
    return out;
  }
}
