import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { readJsonFile } from "../storage/json-file.js";
import { registerValue } from "../runtime/inject.js";
import { CONFIG, DAEMON_EVENTS, ENV, LOGGER, PLUGINS, SERVICES, resolve } from "../tokens.js";
import { daemonEventSource } from "./daemon-event-source.js";
import { loadPlugins } from "./load.js";
import { PackageRefresh, PLUGIN_REFRESH } from "./refresh.js";

/**
 * Loads the built-in plugins, then the packages of config `adapters` in order, into the PLUGINS
 * registry at daemon start; one warning per package that failed. Starts before the modules that
 * use plugins. Registers the refresh that loads packages installed later (refresh.ts), and offers
 * plugins the host service "daemonEvents" (the daemon's events, read-only).
 */
export const pluginHostModule: DaemonModule = {
  name: "plugin-host",
  async start(c: DependencyContainer) {
    const logger = resolve(c, LOGGER).child({ module: "plugin-host" });
    const registry = resolve(c, PLUGINS);
    resolve(c, SERVICES).provide(
      "daemonEvents",
      daemonEventSource(resolve(c, DAEMON_EVENTS), logger.child({ service: "daemonEvents" })),
    );
    const ids = resolve(c, CONFIG).current().effective.adapters ?? [];
    await loadPlugins(registry, { ids, env: resolve(c, ENV), cwd: process.cwd(), logger });
    for (const s of registry.shadowed) {
      logger.info(`${s.type} "${s.kind}" from ${s.winner.package} replaces the one from ${s.loser.package}`, {
        type: s.type,
        kind: s.kind,
      });
    }
    logger.info("plugins loaded", { plugins: registry.list().length, failures: registry.failures.length });
    const config = resolve(c, CONFIG);
    const refresh = new PackageRefresh({
      registry,
      // As config.json lists them now: `svc adapters install` or `rm` has just written it, and the
      // file watcher may not have told the config service yet. A file that cannot be read or
      // parsed (mid-edit) leaves the configuration's list.
      ids: async () => {
        const file = await readJsonFile<unknown>(config.current().path).catch(() => null);
        if (file === undefined) return [];
        const listed = isObject(file) ? (file.adapters ?? []) : null;
        if (!Array.isArray(listed)) return config.current().effective.adapters ?? [];
        return listed.filter((id): id is string => typeof id === "string");
      },
      env: resolve(c, ENV),
      cwd: process.cwd(),
      logger,
    });
    registerValue(c, PLUGIN_REFRESH, refresh);
  },
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
