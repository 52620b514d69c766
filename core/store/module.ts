/**
 * The store DaemonModule (right after the config module): chooses the store once at start
 * (select.ts) and registers it under STORE. File mode loads nothing more. Team mode imports
 * ./postgres/open-store.js, which opens the pool, migrates the core tables and offers the host
 * service `teamDatabase`; the pool closes at stop (this module stops last but one).
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { registerValue } from "../runtime/inject.js";
import { CONFIG, ENV, HOME, LOGGER, resolve } from "../tokens.js";
import { storeOfConfig } from "./select.js";
import { STORE } from "./tokens.js";

export const storeModule: DaemonModule = {
  name: "store",
  async start(c: DependencyContainer) {
    const config = resolve(c, CONFIG).current();
    const choice = storeOfConfig(config);
    if (choice.kind === "file") {
      registerValue(c, STORE, { kind: "file" });
      return;
    }
    const { openTeamStore } = await import("./postgres/open-store.js");
    await openTeamStore(c, {
      url: choice.url,
      env: resolve(c, ENV),
      home: resolve(c, HOME),
      keyFile: config.effective.store?.keyFile,
      keyFileSource: config.sources["store.keyFile"],
      logger: resolve(c, LOGGER).child({ area: "store" }),
    });
  },
  async stop(c: DependencyContainer) {
    if (!c.isRegistered(STORE as never)) return;
    const store = resolve(c, STORE);
    if (store.kind !== "postgres") return;
    await store.jobs?.stop();
    await store.db.close();
  },
};
