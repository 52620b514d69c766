/**
 * The built-in `webhook` target: matched events become signed Standard Webhooks POSTs to an
 * external HTTPS callback, through a durable outbox, bounded retries and the host's SSRF gate
 * (the host service "egress"). See docs/webhook-target.md and docs/redelivery.md.
 */
import { z } from "zod";
import { SvcError, defineTarget, issuesToDetails } from "../../core/plugin-api/index.js";
import { replaySelectorSchema, type ReplaySelector } from "./replay.js";
import { createChallengeVerifier } from "./challenge.js";
import { rotateSecret } from "./rotation.js";
import { signWithKey } from "./signer.js";
import { createWebhookTarget } from "./target.js";

export default defineTarget({
  kind: "webhook",
  description: "Signed HTTPS POSTs (Standard Webhooks) through a durable outbox",
  setup(ctx) {
    const verifier = createChallengeVerifier({ egress: ctx.service("egress"), clock: ctx.clock, random: ctx.random, sign: signWithKey, logger: ctx.logger });
    const target = createWebhookTarget(ctx, { verifier });
    if (ctx.hasService("routes")) {
      ctx.service("routes").add({
        method: "POST",
        path: "/sentinels/:id/rotate-secret",
        auth: "token",
        maxBodyBytes: 4_096,
        handler: async (req) => {
          const secret = rotationBody(req.body.length === 0 ? {} : req.json());
          const result = await rotateSecret(
            { sentinels: ctx.service("sentinels"), vault: target.vault, verifier, clock: ctx.clock, random: ctx.random },
            { sentinelId: req.params.id!, principal: req.principal, ...(secret !== undefined ? { secret } : {}) },
          );
          return { status: 200, body: result };
        },
      });
    }
    if (ctx.hasService("routes")) {
      ctx.service("routes").add({
        method: "POST",
        path: "/sentinels/:id/replay",
        auth: "token",
        maxBodyBytes: 4_096,
        handler: async (req) => ({ status: 200, body: await target.replay(req.params.id!, replaySelector(req.body.length === 0 ? {} : req.json())) }),
      });
    }
    if (ctx.hasService("tools")) {
      ctx.service("tools").add({
        name: "sentinel_replay",
        title: "Send webhook deliveries again",
        description:
          "Send a webhook sentinel's dead (or, with eventId/since, delivered) outbox rows again: exact stored bytes, same webhook-id, attempts reset, through the SSRF gate. Needs the daemon's bearer token.",
        inputSchema: { sentinelId: z.string().min(1).describe("the webhook sentinel (snt_…)"), ...replaySelectorSchema.shape },
        outputSchema: {
          sentinelId: z.string().describe("the sentinel"),
          replayed: z
            .array(
              z.looseObject({
                eventId: z.string().describe("the event's id (the webhook-id header of the delivery)"),
                requestId: z.string().describe("the outbox row's request id"),
                was: z.string().describe("the row's state before the replay (dead or delivered)"),
                replays: z.number().describe("how many times the row has been replayed, this one included"),
              }),
            )
            .describe("the rows queued again"),
          skipped: z.number().describe("matched rows left alone (still pending)"),
        },
        requires: "token",
        handler: ({ sentinelId, ...selector }) => target.replay(sentinelId, selector),
      });
    }
    return target;
  },
});

/** The replay body: `{}` (every dead row), or `{eventId?, since?, dead?}`; anything else is refused. */
function replaySelector(body: unknown): ReplaySelector {
  const r = replaySelectorSchema.safeParse(body);
  if (r.success) return r.data;
  throw new SvcError("invalid_input", 'the replay body must be {} or {"eventId"?: string, "since"?: epoch ms, "dead"?: boolean}', { details: issuesToDetails(r.error.issues) });
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
    throw new SvcError("invalid_input", `unknown field${unknown.length > 1 ? "s" : ""} ${unknown.map((k) => JSON.stringify(k)).join(", ")} in the rotation body: ${ROTATION_BODY}`, {
      details: unknown.map((k) => ({ path: k, message: "unknown field" })),
    });
  }
  const secret = (body as { secret?: unknown }).secret;
  if (secret !== undefined && typeof secret !== "string") {
    throw new SvcError("invalid_input", `secret must be a whsec_ string, or absent to have the daemon generate one`, { details: [{ path: "secret", message: "must be a string" }] });
  }
  return secret;
}
