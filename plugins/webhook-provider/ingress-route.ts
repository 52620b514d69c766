/**
 * `POST /providers/webhook/github`: GitHub's own webhook deliveries. Open to the network (GitHub
 * cannot hold a daemon token) but every delivery must carry a valid `X-Hub-Signature-256` for the
 * configured secret, checked in constant time before the body is even parsed; unsigned or badly
 * signed deliveries get 401. The `X-GitHub-Delivery` id becomes the event id, so a redelivery of
 * the same delivery is deduplicated by the engine.
 */
import type { Logger, RouteDef, SentinelIngress } from "../../core/plugin-api/index.js";
import { SvcError } from "../../core/plugin-api/index.js";
import { mapGithubEvent } from "../github-common/index.js";
import { verifySignature } from "./signature.js";
import { INGRESS_PATH } from "./settings.js";

export interface IngressDeps {
  secret(): Promise<string | undefined>;
  ingress(): SentinelIngress;
  logger: Logger;
  now(): number;
}

const DELIVERY_ID = /^[A-Za-z0-9-]{1,100}$/;

export function ingressRoute(deps: IngressDeps): RouteDef {
  return {
    method: "POST",
    path: INGRESS_PATH,
    auth: "open",
    maxBodyBytes: 25 * 1024 * 1024,
    async handler(req) {
      const secret = await deps.secret();
      if (!secret) {
        throw new SvcError("unavailable", "the webhook provider has no secret yet: set one with setup_sentinel_provider (provider webhook, settings {secret})");
      }
      const signature = req.headers["x-hub-signature-256"];
      if (signature === undefined) throw new SvcError("unauthorized", "unsigned delivery: X-Hub-Signature-256 is missing");
      if (!verifySignature(req.body, signature, secret)) {
        deps.logger.warn("webhook delivery refused: bad signature", { delivery: String(req.headers["x-github-delivery"] ?? "").slice(0, 100) });
        throw new SvcError("unauthorized", "bad signature: X-Hub-Signature-256 does not match the body for the configured secret");
      }
      const name = String(req.headers["x-github-event"] ?? "");
      const delivery = String(req.headers["x-github-delivery"] ?? "");
      if (!name) throw new SvcError("invalid_input", "X-GitHub-Event is missing");
      if (!DELIVERY_ID.test(delivery)) throw new SvcError("invalid_input", "X-GitHub-Delivery must be the delivery's GUID (letters, digits and -)");
      if (name === "ping") return { status: 200, body: { ok: true, pong: true } };
      const payload = parsePayload(req.body, String(req.headers["content-type"] ?? ""));
      const event = mapGithubEvent(name, payload, { id: delivery, fallbackTime: new Date(deps.now()).toISOString() });
      deps.logger.info("webhook delivery", { delivery, event: name, mapped: event !== undefined });
      if (!event) return { status: 202, body: { accepted: 0, ignored: name } };
      const result = await deps.ingress().ingest("webhook", [event]);
      return { status: 200, body: { accepted: result.accepted, eventId: event.id, type: event.type, matched: result.matched.length } };
    },
  };
}

/** JSON, or the form encoding GitHub uses for `content_type: form` hooks (`payload=<json>`). */
function parsePayload(body: Buffer, contentType: string): unknown {
  try {
    const text = body.toString("utf8");
    if (contentType.startsWith("application/x-www-form-urlencoded")) return JSON.parse(new URLSearchParams(text).get("payload") ?? "");
    return JSON.parse(text);
  } catch {
    throw new SvcError("invalid_input", "the delivery body is not a JSON payload");
  }
}
