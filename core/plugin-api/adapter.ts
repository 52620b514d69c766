import type { PluginContext } from "./context.js";

/**
 * An adapter starts agent sessions (ACP agents, terminal presets). The session runtime defines
 * what a started session looks like; this is the shape the plugin host checks.
 */
export interface AdapterInstance {
  /** Adapter slugs this plugin can start (a dynamic adapter, like ACP, serves many). */
  slugs?(): string[] | Promise<string[]>;
  [member: string]: unknown;
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
