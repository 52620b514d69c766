import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../daemon/module.js";
import { CLOCK, CONFIG, DAEMON_EVENTS, ENV, HOME, LOGGER, RANDOM, ROUTES, SLEEP, TOOLS, resolve } from "../tokens.js";
import { SESSIONS } from "../sessions/runtime.js";
import { swarmRoutes } from "./routes.js";
import type { SwarmService, SwarmDeps } from "./service.js";
import { swarmTools } from "./tools.js";

/** The run service's dependencies, from the daemon's container. */
export function swarmDeps(c: DependencyContainer): SwarmDeps {
  return {
    container: c,
    sessions: resolve(c, SESSIONS),
    config: resolve(c, CONFIG),
    clock: resolve(c, CLOCK),
    random: resolve(c, RANDOM),
    sleep: resolve(c, SLEEP),
    logger: resolve(c, LOGGER),
    events: resolve(c, DAEMON_EVENTS),
    home: resolve(c, HOME),
    env: resolve(c, ENV),
  };
}

const services = new WeakMap<DependencyContainer, Promise<SwarmService>>();

/**
 * run-swarm in the daemon: its routes and MCP tools; stopping cancels live runs. The run service
 * (the planner, the scheduler, the run store) loads at the first call of a route or tool.
 */
export const swarmModule: DaemonModule = {
  name: "swarm",
  async start(c: DependencyContainer) {
    const service = () => {
      let s = services.get(c);
      if (!s) services.set(c, (s = import("./service.js").then(({ SwarmService }) => new SwarmService(swarmDeps(c)))));
      return s;
    };
    const routes = resolve(c, ROUTES);
    for (const r of swarmRoutes(service)) routes.add(r);
    const tools = resolve(c, TOOLS);
    for (const t of swarmTools(service)) tools.add(t);
  },
  async stop(c: DependencyContainer) {
    await (await services.get(c))?.stopAll();
    services.delete(c);
  },
};
