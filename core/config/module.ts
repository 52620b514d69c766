/**
 * The configuration's daemon module: reloads config.json when it changes (a bad file keeps the
 * last good configuration, with a warning) and registers the config MCP tools.
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { CONFIG, LOGGER, TOOLS, resolve } from "../tokens.js";
import { configTools } from "./tools.js";
import { ConfigFileWatcher } from "./watch.js";

const watchers = new WeakMap<DependencyContainer, ConfigFileWatcher>();

export const configModule: DaemonModule = {
  name: "config",
  async start(c: DependencyContainer) {
    const config = resolve(c, CONFIG);
    const logger = resolve(c, LOGGER).child({ module: "config" });
    const tools = resolve(c, TOOLS);
    for (const tool of configTools(config)) tools.add(tool);
    const watcher = new ConfigFileWatcher(config.current().path, () => {
      void config.reload().then((r) => {
        if (r.ok) logger.info("config.json reloaded", { path: r.snapshot.path });
      });
    });
    watchers.set(c, watcher);
    await watcher.start();
  },
  async stop(c: DependencyContainer) {
    watchers.get(c)?.stop();
    watchers.delete(c);
  },
};
