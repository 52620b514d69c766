/**
 * The sketch's rule for `delivery.secret` (Standard Webhooks: the plugin API's one rule), checked
 * before anything is sent, so a malformed secret answers -32602 `invalid_secret` rather than a
 * failed challenge.
 */
import { WEBHOOK_SECRET_RULE, decodeWebhookSecret } from "../plugin-api/webhook-secret.js";
import { invalidParams } from "./rpc-errors.js";

/** Throws -32602 `invalid_secret` (never echoing the value) unless `secret` follows the rule. */
export function checkWebhookSecret(secret: unknown): string {
  if (decodeWebhookSecret(secret) === undefined)
    throw invalidParams("invalid_secret", `delivery.secret: ${WEBHOOK_SECRET_RULE}`);
  return secret as string;
}
