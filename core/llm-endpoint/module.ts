/**
 * `features.llmEndpoint`: while it is off, nothing of the llm-endpoint loads and no port is
 * bound (this module reads one flag). Turned on (at start, or later in config.json), the service
 * and its routes and tools load, and the sidecar starts; turned off, the sidecar stops (the routes
 * and tools stay, and report it stopped, until the daemon restarts).
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import {
  CLOCK,
  CONFIG,
  CREDENTIALS,
  DAEMON_EVENTS,
  ENV,
  HOME,
  LOGGER,
  ROUTES,
  TOOLS,
  resolve,
  token,
} from "../tokens.js";
import { SESSIONS } from "../sessions/runtime.js";
import type { LlmEndpointService } from "./service.js";
import { registerValue } from "../runtime/inject.js";

/** What the llm-endpoint offers the session steward: its channel to the judge while the sidecar runs. */
export interface StewardModelAccess {
  channel(): Promise<{ url: string; token: string } | undefined>;
}

export const STEWARD_MODEL_ACCESS = token<StewardModelAccess>("llm-endpoint.steward");

interface Held {
  service?: LlmEndpointService;
  loading?: Promise<LlmEndpointService>;
  unsubscribe?: () => void;
}

const held = new WeakMap<DependencyContainer, Held>();

async function load(c: DependencyContainer, h: Held): Promise<LlmEndpointService> {
  if (h.service) return h.service;
  h.loading ??= (async () => {
    const [{ LlmEndpointService }, { llmEndpointRoutes, llmEndpointTools }] = await Promise.all([
      import("./service.js"),
      import("./surface.js"),
    ]);
    const clock = resolve(c, CLOCK);
    const service = new LlmEndpointService({
      config: resolve(c, CONFIG),
      credentials: resolve(c, CREDENTIALS),
      env: resolve(c, ENV),
      home: resolve(c, HOME),
      logger: resolve(c, LOGGER),
      events: resolve(c, DAEMON_EVENTS),
      sessions: resolve(c, SESSIONS),
      now: () => clock.now(),
    });
    const routes = resolve(c, ROUTES);
    for (const r of llmEndpointRoutes(service)) routes.add(r);
    const tools = resolve(c, TOOLS);
    for (const t of llmEndpointTools(service)) tools.add(t);
    h.service = service;
    return service;
  })();
  return h.loading;
}

async function follow(c: DependencyContainer, h: Held, on: boolean): Promise<void> {
  if (on) await (await load(c, h)).start();
  else await h.service?.stop();
}

export const llmEndpointModule: DaemonModule = {
  name: "llm-endpoint",
  async start(c: DependencyContainer) {
    const h: Held = {};
    held.set(c, h);
    registerValue(c, STEWARD_MODEL_ACCESS, {
      channel: async () => (h.service ? h.service.stewardChannel() : undefined),
    });
    const config = resolve(c, CONFIG);
    const logger = resolve(c, LOGGER);
    let on = config.current().effective.features.llmEndpoint === true;
    h.unsubscribe = config.onChange((snap) => {
      const next = snap.effective.features.llmEndpoint === true;
      if (next === on) return;
      on = next;
      follow(c, h, next).catch((err: Error) =>
        logger.error(`llm-endpoint: ${next ? "starting" : "stopping"} the sidecar failed`, { error: err.message }),
      );
    });
    if (on) {
      // A sidecar that cannot start is told (status, log) and does not stop the daemon.
      await follow(c, h, true).catch((err: Error) =>
        logger.error("llm-endpoint: the sidecar did not start", { error: err.message }),
      );
    }
  },
  async stop(c: DependencyContainer) {
    const h = held.get(c);
    held.delete(c);
    h?.unsubscribe?.();
    await (await h?.loading?.catch(() => undefined))?.shutdown();
  },
};
