import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { registerClass, registerValue } from "../runtime/inject.js";
import { CLOCK, CONFIG, ENV, LOGGER, ROUTES, SERVICES, TOOLS, resolve } from "../tokens.js";
import { registryAdapterLookup, SESSION_ADAPTERS } from "./adapter-lookup.js";
import { SessionMessaging } from "./messaging.js";
import { endOrphanedSessions, orphanGraceMs } from "./orphans.js";
import { SessionResumer } from "./resume.js";
import { sessionRoutes } from "./routes.js";
import { SessionRuntime, SESSIONS } from "./runtime.js";
import { sessionTools } from "./tools.js";

const TICK_MS = 1000;
const timers = new WeakMap<DependencyContainer, NodeJS.Timeout>();
const sweeps = new WeakMap<DependencyContainer, { abort: AbortController; done: Promise<unknown> }>();

/**
 * Agent sessions in the daemon: the runtime (offered to plugins as the host service "sessions"),
 * its routes and MCP tools, the watchdog tick, and (in the background, so the daemon listens at
 * once) the end of sessions an earlier daemon life left running (orphans.ts).
 */
export const sessionsModule: DaemonModule = {
  name: "sessions",
  async start(c: DependencyContainer) {
    if (!c.isRegistered(SESSION_ADAPTERS as never)) registerValue(c, SESSION_ADAPTERS, registryAdapterLookup(c));
    registerClass(c, SESSIONS, SessionRuntime);
    const runtime = resolve(c, SESSIONS);
    const config = resolve(c, CONFIG);
    const messaging = new SessionMessaging(runtime, config);
    const resumer = new SessionResumer({
      runtime,
      adapters: resolve(c, SESSION_ADAPTERS),
      earlierLives: () => sweeps.get(c)?.done ?? Promise.resolve(),
      logger: resolve(c, LOGGER),
    });
    resolve(c, SERVICES).provide("sessions", runtime);
    const routes = resolve(c, ROUTES);
    for (const r of sessionRoutes(runtime, messaging, config, resumer)) routes.add(r);
    const tools = resolve(c, TOOLS);
    for (const t of sessionTools(runtime, messaging, config, resumer)) tools.add(t);
    const timer = setInterval(() => {
      try {
        runtime.tick();
      } catch (err) {
        resolve(c, LOGGER).error("session watchdog tick failed", { error: (err as Error).message });
      }
    }, TICK_MS);
    timer.unref();
    timers.set(c, timer);
    // Sessions started from now on are known to the runtime, which the sweep never touches.
    const logger = resolve(c, LOGGER);
    const clock = resolve(c, CLOCK);
    const abort = new AbortController();
    const graceMs = orphanGraceMs(resolve(c, ENV));
    const done = endOrphanedSessions({
      eventsDir: runtime.eventsDir,
      isKnown: (id) => runtime.state(id) !== "unknown",
      now: () => clock.now(),
      ...(graceMs ? { graceMs } : {}),
      signal: abort.signal,
      logger,
    }).catch((err: Error) => logger.error("ending the sessions of an earlier daemon failed", { error: err.message }));
    sweeps.set(c, { abort, done });
  },
  async stop(c: DependencyContainer) {
    clearInterval(timers.get(c));
    timers.delete(c);
    const sweep = sweeps.get(c);
    sweeps.delete(c);
    sweep?.abort.abort();
    await sweep?.done;
    await resolve(c, SESSIONS).stopAll();
  },
};
