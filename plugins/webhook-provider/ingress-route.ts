/**
 * `POST /providers/webhook/github`: GitHub's own webhook deliveries. Open to the network (GitHub
 * cannot hold a daemon token) but every delivery must carry a valid `X-Hub-Signature-256` for the
 * configured secret, checked in constant time before the body is even parsed; unsigned or badly
 * signed deliveries get 401. The `X-GitHub-Delivery` id becomes the event id, so a redelivery of
 * the same delivery is deduplicated by the engine.
 */
import type { Logger, RouteDef, SentinelIngress } from "../../core/plugin-api/index.js";
import { JSON_DEPTH_MAX, SvcError, jsonDepthExceeded } from "../../core/plugin-api/index.js";
import { mapGithubEvent } from "../github-common/index.js";
import { verifySignature } from "./signature.js";
import { INGRESS_PATH } from "./settings.js";

export interface IngressDeps {
  secret(): Promise<string | undefined>;
  ingress(): SentinelIngress;
  logger: Logger;
  now(): number;
}

/** GitHub's delivery ids are GUIDs (`X-GitHub-Delivery: 72d3162e-cc78-11e3-81ab-4c9367dc0958`). */
const DELIVERY_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Delivery ids answered recently: a redelivery (GitHub's "Redeliver") is answered as a duplicate at once. */
const RECENT_DELIVERIES = 10_000;

export function ingressRoute(deps: IngressDeps): RouteDef {
  const recent = new Set<string>();
  const remember = (id: string) => {
    recent.add(id);
    if (recent.size > RECENT_DELIVERIES) recent.delete(recent.values().next().value!);
  };
  return {
    method: "POST",
    path: INGRESS_PATH,
    auth: "open",
    maxBodyBytes: 25 * 1024 * 1024,
    async handler(req) {
      const secret = await deps.secret();
      if (!secret) {
        throw new SvcError(
          "unavailable",
          "the webhook provider has no secret yet: set one with svc sentinel providers setup webhook --secret secret (or the MCP tool setup_sentinel_provider, provider webhook, settings {secret})",
        );
      }
      const signature = req.headers["x-hub-signature-256"];
      if (signature === undefined)
        throw new SvcError("unauthorized", "unsigned delivery: X-Hub-Signature-256 is missing");
      if (!verifySignature(req.body, signature, secret)) {
        deps.logger.warn("webhook delivery refused: bad signature", {
          delivery: String(req.headers["x-github-delivery"] ?? "").slice(0, 100),
        });
        throw new SvcError(
          "unauthorized",
          "bad signature: X-Hub-Signature-256 does not match the body for the configured secret",
        );
      }
      const name = String(req.headers["x-github-event"] ?? "");
      const delivery = String(req.headers["x-github-delivery"] ?? "");
      if (!name) throw new SvcError("invalid_input", "X-GitHub-Event is missing");
      if (!DELIVERY_ID.test(delivery)) {
        throw new SvcError(
          "invalid_input",
          "X-GitHub-Delivery must be the delivery's GUID (8-4-4-4-12 hexadecimal digits, e.g. 72d3162e-cc78-11e3-81ab-4c9367dc0958)",
        );
      }
      if (name === "ping") return { status: 200, body: { ok: true, pong: true } };
      const payload = parsePayload(req.body, String(req.headers["content-type"] ?? ""));
      const event = mapGithubEvent(name, payload, { id: delivery, fallbackTime: new Date(deps.now()).toISOString() });
      deps.logger.info("webhook delivery", { delivery, event: name, mapped: event !== undefined });
      if (!event) return { status: 202, body: { accepted: 0, ignored: name } };
      if (recent.has(event.id))
        return { status: 200, body: { accepted: 0, duplicate: true, eventId: event.id, type: event.type } };
      const result = await deps.ingress().ingest("webhook", [event]);
      remember(event.id);
      // After a restart the engine's per-sentinel dedup (durable) still knows the id.
      const duplicate = result.matched.length > 0 && result.matched.every((m) => m.outcome === "duplicate");
      return {
        status: 200,
        body: {
          accepted: result.accepted,
          eventId: event.id,
          type: event.type,
          matched: result.matched.length,
          ...(duplicate ? { duplicate: true } : {}),
        },
      };
    },
  };
}

/** JSON, or the form encoding GitHub uses for `content_type: form` hooks (`payload=<json>`). */
function parsePayload(body: Buffer, contentType: string): unknown {
  const raw = body.toString("utf8");
  const text = contentType.startsWith("application/x-www-form-urlencoded")
    ? (new URLSearchParams(raw).get("payload") ?? "")
    : raw;
  // The nesting limit of every JSON body (docs/limits.md): deeper data overflows the stack later.
  if (jsonDepthExceeded(text) !== undefined)
    throw new SvcError(
      "invalid_input",
      `the delivery payload nests objects and arrays deeper than ${JSON_DEPTH_MAX} levels`,
    );
  try {
    return JSON.parse(text);
  } catch {
    throw new SvcError("invalid_input", "the delivery body is not a JSON payload");
  }
}
