/**
 * The webhook target's REST routes, all `auth: "token"`: rotate a secret, replay rows, resume a
 * suspended sentinel, and the daemon's side of `svc webhooks check`.
 */
import { z } from "zod";
import { SvcError, issuesToDetails, type RouteDef, type RouteRegistry } from "../../core/plugin-api/index.js";
import { replaySelectorSchema, type ReplaySelector } from "./replay.js";
import type { WebhookTarget } from "./target.js";

export function addWebhookRoutes(routes: RouteRegistry, target: WebhookTarget): void {
  const post = (path: string, maxBodyBytes: number, handler: RouteDef["handler"]) =>
    routes.add({ method: "POST", path, auth: "token", maxBodyBytes, handler });
  const json = (req: { body: Buffer; json(): unknown }) => (req.body.length === 0 ? {} : req.json());
  post("/sentinels/:id/rotate-secret", 4_096, async (req) => {
    const secret = rotationBody(json(req));
    return {
      status: 200,
      body: await target.rotate({
        sentinelId: req.params.id!,
        principal: req.principal,
        ...(secret !== undefined ? { secret } : {}),
      }),
    };
  });
  post("/sentinels/:id/replay", 4_096, async (req) => ({
    status: 200,
    body: await target.replay(req.params.id!, replaySelector(json(req))),
  }));
  post("/sentinels/:id/resume", 1_024, async (req) => {
    emptyBody(json(req), "the resume body");
    return { status: 200, body: { sentinelId: req.params.id!, ...(await target.resumeById(req.params.id!)) } };
  });
  post("/webhooks/check", 4_096, async (req) => ({
    status: 200,
    body: await target.checkCallbacks(checkBody(req.json()), req.principal),
  }));
}

/** The replay body: `{}` (every dead row), or `{eventId?, since?, dead?}`; anything else is refused. */
function replaySelector(body: unknown): ReplaySelector {
  const r = replaySelectorSchema.safeParse(body);
  if (r.success) return r.data;
  throw new SvcError(
    "invalid_input",
    'the replay body must be {} or {"eventId"?: string, "since"?: epoch ms, "dead"?: boolean}',
    { details: issuesToDetails(r.error.issues) },
  );
}

/** `POST /webhooks/check`: `{url}`, nothing else. */
function checkBody(body: unknown): string {
  const r = z.strictObject({ url: z.string().min(1) }).safeParse(body);
  if (r.success) return r.data.url;
  throw new SvcError("invalid_input", 'the check body must be {"url": "https://…"}', {
    details: issuesToDetails(r.error.issues),
  });
}

/** A body that must be empty or `{}`. */
function emptyBody(body: unknown, what: string): void {
  if (body !== null && typeof body === "object" && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw new SvcError("invalid_input", `${what} must be empty or {}`);
}

const ROTATION_BODY = 'give {} (the daemon generates the secret) or {"secret": "whsec_…"}';

/** The rotation body: nothing, `{}` or `{secret}`; anything else (null, an array, a string, other keys) is refused. */
function rotationBody(body: unknown): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    const got = body === null ? "null" : Array.isArray(body) ? "an array" : `a ${typeof body}`;
    throw new SvcError("invalid_input", `the rotation body must be a JSON object, got ${got}: ${ROTATION_BODY}`);
  }
  const unknown = Object.keys(body).filter((k) => k !== "secret");
  if (unknown.length) {
    throw new SvcError(
      "invalid_input",
      `unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")} in the rotation body: ${ROTATION_BODY}`,
      {
        details: unknown.map((k) => ({ path: k, message: "unknown field" })),
      },
    );
  }
  const secret = (body as { secret?: unknown }).secret;
  if (secret !== undefined && typeof secret !== "string") {
    throw new SvcError("invalid_input", `secret must be a whsec_ string, or absent to have the daemon generate one`, {
      details: [{ path: "secret", message: "must be a string" }],
    });
  }
  return secret;
}
