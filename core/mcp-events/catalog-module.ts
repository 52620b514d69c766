/**
 * Registers the events catalog (EVENT_CATALOG) in the daemon container. It reads the loaded
 * providers through the sentinel engine's plugin access only when asked, so it costs nothing
 * until the first `events/list` or subscription.
 */
import type { DaemonModule } from "../daemon/module.js";
import { registerValue } from "../runtime/inject.js";
import { SENTINEL_PLUGINS } from "../sentinels/tokens.js";
import { LOGGER, resolve } from "../tokens.js";
import { EVENT_CATALOG } from "./catalog-types.js";
import { createEventCatalog } from "./catalog.js";

export const eventCatalogModule: DaemonModule = {
  name: "event-catalog",
  async start(c) {
    const logger = resolve(c, LOGGER).child({ area: "mcp-events" });
    registerValue(c, EVENT_CATALOG, createEventCatalog({ plugins: () => resolve(c, SENTINEL_PLUGINS), logger }));
  },
};
