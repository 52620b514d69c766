/**
 * `GET /adapters`: what the daemon loaded (each plugin with its package) and what failed to load
 * (the load report: package, phase, error), as the daemon holds them now.
 */
import type { RouteDef } from "../plugin-api/http.js";
import type { PluginRegistry } from "./registry.js";

export function adaptersRoute(registry: PluginRegistry): RouteDef {
  return {
    method: "GET",
    path: "/adapters",
    auth: "loopback-or-token",
    handler: () => ({
      status: 200,
      body: {
        plugins: registry.list().map((p) => ({
          type: p.type,
          kind: p.kind,
          ...(p.description ? { description: p.description } : {}),
          package: p.source.package,
          builtin: p.source.builtin,
          ...(p.source.version ? { version: p.source.version } : {}),
        })),
        failures: registry.failures.map((f) => ({ package: f.package, phase: f.phase, error: f.error })),
      },
    }),
  };
}
