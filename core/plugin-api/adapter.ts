import type { PluginContext } from "./context.js";
import type { AdapterSession, SessionStartSpec, SessionUpdateSink } from "./sessions.js";

/**
 * What an adapter plugin's `setup` returns: the one contract the session runtime (core/sessions)
 * calls to start sessions (ACP agents, terminal presets, `@svc/adapter-<slug>` packages).
 *
 * A package adapter serves the slug equal to its `kind`: `svc sessions start --adapter <kind>`
 * starts it, ahead of a config `acpAgents` entry or catalog entry of the same slug.
 */
export interface AdapterInstance {
  /**
   * Starts one session. Report what it does through `sink` (every call counts as activity) and
   * call `sink.exited` when it ends, including after {@link AdapterSession.stop}.
   */
  start(spec: SessionStartSpec, sink: SessionUpdateSink): Promise<AdapterSession>;
  /** Adapter slugs this plugin can start (a dynamic adapter, like ACP, serves many). */
  slugs?(): string[] | Promise<string[]>;
  /** A dynamic adapter (ACP) says where its recipe for `slug` comes from, or undefined when it has none. */
  sourceOf?(slug: string): "config" | "catalog" | undefined;
}

export interface AdapterPlugin {
  readonly type: "adapter";
  readonly kind: string;
  readonly description?: string;
  setup(ctx: PluginContext): AdapterInstance | Promise<AdapterInstance>;
}

/** Declares an adapter plugin. Default-export the result from the manifest's `entry`. */
export function defineAdapter(def: Omit<AdapterPlugin, "type">): AdapterPlugin {
  return Object.freeze({ ...def, type: "adapter" as const });
}
