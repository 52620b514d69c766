/**
 * The engine's view of the loaded providers and targets: set-up instances through the plugin
 * host (one setup per plugin, with the context the host makes), and the loaded kinds.
 */
import type { DependencyContainer } from "tsyringe";
import { pluginInstance } from "../plugin-host/context.js";
import { loadFailureMessage } from "../plugin-host/failure-message.js";
import type { ProviderInstance } from "../plugin-api/provider.js";
import type { TargetInstance } from "../plugin-api/target.js";
import { PLUGINS, resolve } from "../tokens.js";

export interface SentinelPlugins {
  providerKinds(): string[];
  targetKinds(): string[];
  description(type: "provider" | "target", kind: string): string | undefined;
  /** Throws `not_found` naming the loaded kinds. */
  provider(kind: string): Promise<ProviderInstance>;
  target(kind: string): Promise<TargetInstance>;
  /** Why a kind is not loaded when its package failed to load (the plugin_load_failed message). */
  failure?(type: "provider" | "target", kind: string): string | undefined;
}

export function pluginsFromContainer(c: DependencyContainer): SentinelPlugins {
  const registry = resolve(c, PLUGINS);
  return {
    providerKinds: () => registry.kinds("provider"),
    targetKinds: () => registry.kinds("target"),
    description: (type, kind) => registry.get(type, kind)?.description,
    provider: (kind) => pluginInstance(c, "provider", kind),
    target: (kind) => pluginInstance(c, "target", kind),
    failure: (type, kind) => {
      const f = registry.failureOf(type, kind);
      return f && loadFailureMessage(type, kind, f);
    },
  };
}
