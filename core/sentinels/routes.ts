/**
 * The `/sentinels` REST routes. Each handler authorizes its operation through
 * core/daemon/authorization.ts, as the MCP tools of the same operations do; payloads and
 * statuses are documented in docs/sentinels.md.
 */
import type { RouteDef, RouteRequest } from "../plugin-api/http.js";
import { SvcError } from "../errors.js";
import { authorize } from "../daemon/authorization.js";
import type { SentinelService } from "./service.js";
import { redactLikelySecrets } from "../daemon/mcp/redact.js";
import { removeSentinel } from "./tools.js";

/** The operation a creation body asks for: session targets are everyday work, anything else sends outward. */
function creationOperation(body: unknown): "sentinel.watch-session" | "sentinel.create-outbound" {
  const target =
    body !== null && typeof body === "object" && !Array.isArray(body)
      ? (body as { target?: unknown }).target
      : undefined;
  const kind = target !== null && typeof target === "object" ? (target as { kind?: unknown }).kind : undefined;
  return kind === "session" ? "sentinel.watch-session" : "sentinel.create-outbound";
}

/**
 * The `Idempotency-Key` header, when given (the service checks the key itself). Sent twice, it
 * is refused: Node would join the two values with ", " into a key nobody sent.
 */
function idempotencyKeyOf(req: RouteRequest): string | undefined {
  const single = req.headers["idempotency-key"];
  const values =
    (req.raw as RouteRequest["raw"] | undefined)?.headersDistinct?.["idempotency-key"] ??
    (typeof single === "string" ? [single] : []);
  if (values.length > 1) {
    const message = "give one Idempotency-Key header, not several";
    throw new SvcError("invalid_input", `invalid idempotency key: ${message}`, {
      details: [{ path: "idempotencyKey", message }],
    });
  }
  return values[0];
}

export function sentinelRoutes(engine: SentinelService): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/sentinels",
      auth: "loopback-or-token",
      handler: async (req) => {
        const body = req.json();
        authorize(creationOperation(body), req.principal);
        const idempotencyKey = idempotencyKeyOf(req);
        return {
          status: 201,
          body: await engine.create(body, req.principal, idempotencyKey === undefined ? {} : { idempotencyKey }),
        };
      },
    },
    {
      method: "GET",
      path: "/sentinels",
      auth: "loopback-or-token",
      handler: async () => ({ status: 200, body: { sentinels: await engine.list() } }),
    },
    {
      method: "POST",
      path: "/sentinels/poll-now",
      auth: "loopback-or-token",
      handler: async () => ({ status: 200, body: await engine.pollNow() }),
    },
    {
      method: "GET",
      path: "/sentinels/:id",
      auth: "loopback-or-token",
      handler: async (req) => ({ status: 200, body: await engine.status(req.params.id!) }),
    },
    {
      method: "DELETE",
      path: "/sentinels/:id",
      auth: "loopback-or-token",
      handler: async (req) => {
        await removeSentinel(engine, req.params.id!, req.principal);
        return { status: 200, body: { removed: req.params.id } };
      },
    },
    {
      method: "GET",
      path: "/sentinel-providers",
      auth: "loopback-or-token",
      handler: async () => ({ status: 200, body: { providers: await engine.providers() } }),
    },
    {
      method: "POST",
      path: "/sentinel-providers/:provider/setup",
      auth: "loopback-or-token",
      handler: async (req) => {
        authorize("provider.setup", req.principal);
        const body = req.json() as { settings?: unknown } | null;
        const settings = body !== null && typeof body === "object" ? body.settings : undefined;
        if (settings === null || typeof settings !== "object" || Array.isArray(settings))
          throw new SvcError("invalid_input", "the body must be {settings: {...}}, the provider's settings object", {
            details: [{ path: "settings", message: "must be an object" }],
          });
        const provider = req.params.provider!;
        const summary = await engine.setupProvider(provider, settings as Record<string, unknown>);
        return { status: 200, body: { provider, configured: redactLikelySecrets(summary) } };
      },
    },
  ];
}
