/**
 * The `/swarm/runs` routes, guarded as core/daemon/authorization.ts says (`swarm.run`,
 * `swarm.read`: loopback-or-token, as `sessions start` is, since a run starts agent sessions from
 * adapters the configuration already names).
 */
import { authorize } from "../daemon/authorization.js";
import { SvcError, issuesToDetails } from "../errors.js";
import type { RouteDef } from "../plugin-api/http.js";
import { presentedSessionToken } from "../workspaces/lineage.js";
import { runInputSchema } from "./run-input.js";
import type { SwarmService } from "./service.js";

export function swarmRoutes(service: () => Promise<SwarmService>): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/swarm/runs",
      auth: "loopback-or-token",
      handler: async (req) => {
        authorize("swarm.run", req.principal);
        const r = runInputSchema.safeParse(req.json());
        if (!r.success)
          throw new SvcError(
            "invalid_input",
            `invalid request body: ${r.error.issues[0]?.path.join(".")}: ${r.error.issues[0]?.message}`,
            { details: issuesToDetails(r.error.issues) },
          );
        const out = await (await service()).start(r.data, {
          callerToken: presentedSessionToken(req.headers),
          principal: req.principal,
        });
        return { status: out.run ? 201 : 200, body: out };
      },
      maxBodyBytes: 4 * 1024 * 1024,
    },
    {
      method: "GET",
      path: "/swarm/runs",
      auth: "loopback-or-token",
      handler: async () => ({ status: 200, body: { runs: await (await service()).list() } }),
    },
    {
      method: "GET",
      path: "/swarm/runs/:id",
      auth: "loopback-or-token",
      handler: async (req) => ({ status: 200, body: { run: await (await service()).get(req.params.id!) } }),
    },
    {
      method: "POST",
      path: "/swarm/runs/:id/cancel",
      auth: "loopback-or-token",
      handler: async (req) => {
        authorize("swarm.run", req.principal);
        return { status: 200, body: { run: await (await service()).cancel(req.params.id!) } };
      },
    },
  ];
}
