import type { DependencyContainer } from "tsyringe";
import { SVC_VERSION } from "../version.js";
import { DAEMON_EVENTS, ROUTES, resolve } from "../tokens.js";
import type { DaemonModule } from "./module.js";

/** `/health` (open, for probes) and the heartbeat tick route. */
export const coreRoutesModule: DaemonModule = {
  name: "core-routes",
  async start(c: DependencyContainer) {
    const routes = resolve(c, ROUTES);
    const events = resolve(c, DAEMON_EVENTS);
    const startedAt = Date.now();
    routes.add({
      method: "GET",
      path: "/health",
      auth: "open",
      handler: () => ({
        status: 200,
        body: { ok: true, version: SVC_VERSION, pid: process.pid, uptimeMs: Date.now() - startedAt },
      }),
    });
    routes.add({
      method: "POST",
      path: "/heartbeat/tick",
      auth: "loopback-or-token",
      handler: () => {
        events.emit("heartbeat:tick", { at: Date.now() });
        return { status: 200, body: { ok: true } };
      },
    });
  },
};
