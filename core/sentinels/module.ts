/**
 * The sentinels DaemonModule: builds the engine (registered under SENTINELS), offers the host
 * service "sentinels", adds the `/sentinels` routes, sets up and starts the
 * loaded providers and targets, sweeps expiry at startup and on a periodic tick, and stops
 * everything at stop. In team mode the tick's sweep runs on one daemon at a time: the holder of
 * the lease `team:expiry-sweep` (an expiry found twice is stored and announced once anyway).
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { registerClass, registerValue } from "../runtime/inject.js";
import { leadershipOf } from "../store/leadership.js";
import { ENV, LOGGER, PLUGINS, ROUTES, SENTINELS, SERVICES, resolve } from "../tokens.js";
import { SENTINEL_DEDUP, SENTINEL_PLUGINS, SENTINEL_STORE, SENTINEL_TICKER } from "./tokens.js";
import { SentinelDedup } from "./dedup.js";
import { SentinelEngine } from "./engine.js";
import { pluginsFromContainer } from "./plugin-access.js";
import { sentinelRoutes } from "./routes.js";
import { SentinelStore } from "./store.js";
import { STORE } from "../store/tokens.js";
import { intervalTicker, tickIntervalMs } from "./ticker.js";

/** The sentinel records' store: sentinels.json, or the team's PostgreSQL in team mode (loaded only then). */
async function registerSentinelStore(c: DependencyContainer): Promise<void> {
  const store = c.isRegistered(STORE as symbol) ? resolve(c, STORE) : undefined;
  if (store?.kind !== "postgres") return registerClass(c, SENTINEL_STORE, SentinelStore);
  const { PostgresSentinelStore } = await import("../store/postgres/sentinel-store.js");
  registerValue(
    c,
    SENTINEL_STORE,
    new PostgresSentinelStore(store.db, resolve(c, LOGGER).child({ area: "sentinels" })),
  );
}

/** Registers the sentinel services in `c` (at the module's start). */
async function registerSentinelServices(c: DependencyContainer): Promise<SentinelEngine> {
  await registerSentinelStore(c);
  registerClass(c, SENTINEL_DEDUP, SentinelDedup);
  if (!c.isRegistered(SENTINEL_PLUGINS as symbol)) registerValue(c, SENTINEL_PLUGINS, pluginsFromContainer(c));
  registerClass(c, SENTINELS, SentinelEngine);
  const engine = resolve(c, SENTINELS) as SentinelEngine;
  // Pinned: a child container (tests, per-request scopes) must see this engine, not a fresh one.
  registerValue(c, SENTINELS, engine);
  return engine;
}

const stops = new WeakMap<DependencyContainer, () => Promise<void>>();

export const sentinelsModule: DaemonModule = {
  name: "sentinels",
  async start(c) {
    const logger = resolve(c, LOGGER).child({ area: "sentinels" });
    const engine = await registerSentinelServices(c);
    const services = resolve(c, SERVICES);
    services.provide("sentinels", engine);
    const routes = resolve(c, ROUTES);
    for (const r of sentinelRoutes(engine)) routes.add(r);
    await engine.load();
    await startTargets(c);
    await engine.sweep("startup");
    await startProviders(c, engine);
    const ticker = c.isRegistered(SENTINEL_TICKER as symbol) ? resolve(c, SENTINEL_TICKER) : intervalTicker;
    const sweeper = leadershipOf(services).lease("team:expiry-sweep");
    const stopTick = ticker.every(tickIntervalMs(resolve(c, ENV)), () => {
      if (!sweeper.held()) return;
      engine.sweep("tick").catch((err: Error) => logger.error("sentinel expiry tick failed", { error: err.message }));
    });
    stops.set(c, async () => {
      stopTick();
      await sweeper.release();
    });
  },
  async stop(c) {
    await stops.get(c)?.();
    stops.delete(c);
    await (resolve(c, SENTINELS) as SentinelEngine).settled();
    const registry = resolve(c, PLUGINS);
    const logger = resolve(c, LOGGER).child({ area: "sentinels" });
    for (const { type, kind, instance } of await registry.setUpInstances()) {
      if (type !== "provider" && type !== "target") continue;
      await (instance as { stop?(): Promise<void> })
        .stop?.()
        .catch((err: Error) => logger.warn("plugin stop failed", { plugin: `${type}:${kind}`, error: err.message }));
    }
    await resolve(c, SENTINEL_DEDUP).close();
    await resolve(c, SENTINEL_STORE).close?.();
  },
};

function pluginFailure(c: DependencyContainer) {
  const registry = resolve(c, PLUGINS);
  const logger = resolve(c, LOGGER).child({ area: "sentinels" });
  return (type: "provider" | "target", kind: string, err: unknown) => {
    const error = err instanceof Error ? err.message : String(err);
    logger.error("plugin failed to start", { plugin: `${type}:${kind}`, error });
    registry.fail({ package: registry.get(type, kind)?.source.package ?? kind, phase: "setup", error });
  };
}

/** Sets up and starts every loaded target (before the startup sweep, which may call their `expired`). */
async function startTargets(c: DependencyContainer): Promise<void> {
  const plugins = resolve(c, SENTINEL_PLUGINS);
  const failed = pluginFailure(c);
  for (const kind of plugins.targetKinds()) {
    try {
      await (await plugins.target(kind)).start?.();
    } catch (err) {
      failed("target", kind, err);
    }
  }
}

/** Starts every loaded provider and hands it its active sentinels (`watch`). */
async function startProviders(c: DependencyContainer, engine: SentinelEngine): Promise<void> {
  const plugins = resolve(c, SENTINEL_PLUGINS);
  const logger = resolve(c, LOGGER).child({ area: "sentinels" });
  const failed = pluginFailure(c);
  for (const kind of plugins.providerKinds()) {
    try {
      const provider = await plugins.provider(kind);
      await provider.start?.();
      for (const s of engine.active(kind)) {
        await provider
          .watch?.(s)
          .catch((err: Error) =>
            logger.warn("provider watch failed", { sentinel: s.id, provider: kind, error: err.message }),
          );
      }
    } catch (err) {
      failed("provider", kind, err);
    }
  }
}
