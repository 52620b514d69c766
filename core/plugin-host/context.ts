import { join } from "node:path";
import type { DependencyContainer } from "tsyringe";
import type { PluginContext } from "../plugin-api/context.js";
import { CLOCK, CONFIG, HOME, LOGGER, PLUGINS, RANDOM, SERVICES, SLEEP, resolve } from "../tokens.js";
import { FILES } from "../storage/paths.js";
import type { LoadedPlugin } from "./registry.js";

/** Builds the context a plugin receives at setup: everything it may use, nothing of the container. */
export function makePluginContext(c: DependencyContainer, plugin: LoadedPlugin): PluginContext {
  const home = resolve(c, HOME);
  const services = resolve(c, SERVICES);
  const config = resolve(c, CONFIG);
  return {
    type: plugin.type,
    kind: plugin.kind,
    logger: resolve(c, LOGGER).child({ plugin: `${plugin.type}:${plugin.kind}` }),
    clock: resolve(c, CLOCK),
    random: resolve(c, RANDOM),
    sleep: resolve(c, SLEEP),
    home,
    storageDir: join(home, FILES.plugins, `${plugin.type}-${plugin.kind}`),
    config: () => config.current().effective,
    service: (name) => services.get(name),
    hasService: (name) => services.has(name),
  };
}

/** Sets up (once) and returns the instance of a loaded plugin. */
export function pluginInstance<T extends LoadedPlugin["type"]>(c: DependencyContainer, type: T, kind: string) {
  return resolve(c, PLUGINS).instance(type, kind, async (plugin) => {
    const ctx = makePluginContext(c, plugin);
    return (plugin.definition as { setup(ctx: PluginContext): unknown }).setup(ctx);
  });
}

