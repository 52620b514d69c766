/**
 * The built-in `webhook` target: matched events become signed Standard Webhooks POSTs to an
 * external HTTPS callback, through a durable outbox, bounded retries and the host's SSRF gate
 * (the host service "egress"). See docs/webhook-target.md and docs/redelivery.md.
 */
import { defineTarget } from "../../core/plugin-api/index.js";
import { createChallengeVerifier } from "./challenge.js";
import { addWebhookRoutes } from "./routes.js";
import { signWithKey } from "./signer.js";
import { createWebhookTarget } from "./target.js";
import { addWebhookTools } from "./tools.js";

export default defineTarget({
  kind: "webhook",
  description: "Signed HTTPS POSTs (Standard Webhooks) to a callback, through a durable outbox",
  setup(ctx) {
    const verifier = createChallengeVerifier({
      egress: ctx.service("egress"),
      clock: ctx.clock,
      random: ctx.random,
      sign: signWithKey,
      logger: ctx.logger,
    });
    const target = createWebhookTarget(ctx, { verifier });
    if (ctx.hasService("routes")) addWebhookRoutes(ctx.service("routes"), target);
    if (ctx.hasService("tools")) addWebhookTools(ctx.service("tools"), target);
    return target;
  },
});
