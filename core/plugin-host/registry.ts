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
  private readonly entries = new Map<string, T>();
  readonly shadowed: ShadowRecord[] = [];

  constructor(entries: Iterable<T> = []) {
    for (const e of entries) this.add(e);
  }

  add(entry: T): void {
    const k = key(entry.type, entry.kind);
    const prior = this.entries.get(k);
    if (prior) this.shadowed.push({ type: entry.type, kind: entry.kind, winner: entry.source, loser: prior.source });
    this.entries.set(k, entry);
  }

  get(type: PluginType, kind: string): T | undefined {
    return this.entries.get(key(type, kind));
  }

  /** The winners, in the order their (type, kind) was first seen. */
  list(): T[] {
    return [...this.entries.values()];
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
