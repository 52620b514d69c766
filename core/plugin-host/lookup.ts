import type { DependencyContainer } from "tsyringe";
import { PLUGINS, resolve } from "../tokens.js";
import { PLUGIN_REFRESH } from "./refresh.js";
import type { LoadedPlugin, PluginType } from "./registry.js";

/**
 * Brings the daemon's registry up to date with the packages installed now (a no-op where no
 * refresh is registered, as in a CLI verb's container). Cheap when nothing changed.
 */
export async function refreshPlugins(c: DependencyContainer): Promise<void> {
  if (c.isRegistered(PLUGIN_REFRESH as never, true)) await resolve(c, PLUGIN_REFRESH).refresh();
}

/** The plugin of (type, kind), after picking up packages installed or upgraded since the last look. */
export async function currentPlugin(
  c: DependencyContainer,
  type: PluginType,
  kind: string,
): Promise<LoadedPlugin | undefined> {
  await refreshPlugins(c);
  return resolve(c, PLUGINS).get(type, kind);
}
