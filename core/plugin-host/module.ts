import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { CONFIG, ENV, LOGGER, PLUGINS, resolve } from "../tokens.js";
import { loadPlugins } from "./load.js";

/**
 * Loads the built-in plugins, then the packages of config `adapters` in order, into the PLUGINS
 * registry at daemon start; one warning per package that failed. Starts before the modules that
 * use plugins.
 */
export const pluginHostModule: DaemonModule = {
  name: "plugin-host",
  async start(c: DependencyContainer) {
    const logger = resolve(c, LOGGER).child({ module: "plugin-host" });
    const registry = resolve(c, PLUGINS);
    const ids = resolve(c, CONFIG).current().effective.adapters ?? [];
    await loadPlugins(registry, { ids, env: resolve(c, ENV), cwd: process.cwd(), logger });
    for (const s of registry.shadowed) {
      logger.info(`${s.type} "${s.kind}" from ${s.winner.package} replaces the one from ${s.loser.package}`, { type: s.type, kind: s.kind });
    }
    logger.info("plugins loaded", { plugins: registry.list().length, failures: registry.failures.length });
  },
};
