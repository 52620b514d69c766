/**
 * Which route serves a request's model: a role (`role:<name>` or `<name>`) names its model and,
 * optionally, its route and key; otherwise the first route whose `models` pattern matches (exact,
 * or a prefix before a trailing `*`). The route must speak the API that was called.
 */
import type { LlmProvider, RoleSpec, RouteSpec } from "../protocol.js";
import type { SidecarError } from "./errors.js";

export interface Resolved {
  route: RouteSpec;
  /** The model id to send upstream. */
  model: string;
  /** The key to inject (the role's over the route's); absent: the route has no key. */
  key: RouteSpec["key"];
}

export interface RouteTable {
  routes: RouteSpec[];
  roles: RoleSpec[];
}

export const API_PATH: Record<LlmProvider, string> = {
  anthropic: "POST /v1/messages",
  openai: "POST /v1/chat/completions or /v1/responses",
  gemini: "POST /v1beta/models/{model}:generateContent",
};

export function matchesModel(patterns: string[], model: string): boolean {
  for (const p of patterns) {
    if (p.endsWith("*") ? model.startsWith(p.slice(0, -1)) : p === model) return true;
  }
  return false;
}

export function resolveRoute(
  table: RouteTable,
  api: LlmProvider,
  requested: string,
): Resolved | { error: SidecarError } {
  const roleName = requested.startsWith("role:") ? requested.slice(5) : requested;
  const role = table.roles.find((r) => r.role === roleName);
  const model = role ? role.model : requested;
  const route =
    role?.route !== undefined
      ? table.routes.find((r) => r.name === role.route)
      : table.routes.find((r) => matchesModel(r.models, model));
  if (!route) return { error: notFound(table, api, requested, role) };
  if (route.provider !== api) {
    return {
      error: {
        status: 400,
        kind: "invalid_request_error",
        param: "model",
        message: `model "${requested}" is served by llm-endpoint route "${route.name}", which speaks the ${route.provider} API: call ${API_PATH[route.provider]} for it`,
      },
    };
  }
  return { route, model, key: role?.key ?? route.key };
}

function notFound(table: RouteTable, api: LlmProvider, requested: string, role: RoleSpec | undefined): SidecarError {
  const routes =
    table.routes.length === 0
      ? "none"
      : table.routes
          .map((r) => `${r.name} (${r.provider}: ${r.models.length ? r.models.join(", ") : "no models"})`)
          .join("; ");
  const why =
    role?.route !== undefined
      ? `role "${role.role}" names route "${role.route}", which is not configured`
      : `no llm-endpoint route serves model "${requested}"`;
  return {
    status: 404,
    kind: "not_found_error",
    param: "model",
    code: api === "openai" ? "model_not_found" : undefined,
    message: `${why}; configured routes: ${routes} (llmEndpoint.upstreams)`,
  };
}
