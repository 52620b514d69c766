/**
 * The `/sentinels` REST routes (auth "token"). Payloads and statuses are documented in the
 * README section "Sentinels".
 */
import type { RouteDef } from "../plugin-api/http.js";
import type { SentinelService } from "./service.js";

export function sentinelRoutes(engine: SentinelService): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/sentinels",
      auth: "token",
      handler: async (req) => ({ status: 201, body: await engine.create(req.json(), req.principal) }),
    },
    {
      method: "GET",
      path: "/sentinels",
      auth: "token",
      handler: async () => ({ status: 200, body: { sentinels: await engine.list() } }),
    },
    {
      method: "POST",
      path: "/sentinels/poll-now",
      auth: "token",
      handler: async () => ({ status: 200, body: await engine.pollNow() }),
    },
    {
      method: "GET",
      path: "/sentinels/:id",
      auth: "token",
      handler: async (req) => ({ status: 200, body: await engine.status(req.params.id!) }),
    },
    {
      method: "DELETE",
      path: "/sentinels/:id",
      auth: "token",
      handler: async (req) => {
        await engine.remove(req.params.id!);
        return { status: 200, body: { removed: req.params.id } };
      },
    },
    {
      method: "GET",
      path: "/sentinel-providers",
      auth: "token",
      handler: async () => ({ status: 200, body: { providers: await engine.providers() } }),
    },
  ];
}
