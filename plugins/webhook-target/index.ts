/**
 * The built-in `webhook` target: matched events become signed Standard Webhooks POSTs to an
 * external HTTPS callback, through a durable outbox, bounded retries and the host's SSRF gate
 * (the host service "egress"). See the README section "Webhook target".
 */
import { SvcError, defineTarget } from "../../core/plugin-api/index.js";
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
          const body = req.body.length === 0 ? {} : req.json<{ secret?: unknown }>();
          if (body.secret !== undefined && typeof body.secret !== "string") {
            throw new SvcError("invalid_input", "secret must be a whsec_ string, or absent to have the daemon generate one");
          }
          const secret = body.secret;
          const result = await rotateSecret(
            { sentinels: ctx.service("sentinels"), vault: target.vault, verifier, clock: ctx.clock, random: ctx.random },
            { sentinelId: req.params.id!, principal: req.principal, ...(secret !== undefined ? { secret } : {}) },
          );
          return { status: 200, body: result };
        },
      });
    }
    return target;
  },
});
