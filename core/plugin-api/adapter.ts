import type { PluginContext } from "./context.js";
import type { AdapterInstance } from "./sessions.js";

export type { AdapterInstance };

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
