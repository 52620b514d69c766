/**
 * The sketch's rule for `delivery.secret`: `whsec_` followed by base64 decoding to 24 to 64
 * bytes (Standard Webhooks). Checked here, before anything is sent, so a malformed secret answers
 * -32602 `invalid_secret` rather than a failed challenge. The text must be canonical padded
 * base64 (Node's decoder skips stray characters), as the webhook target requires too.
 */
import { invalidParams } from "./rpc-errors.js";

const SHAPE = /^whsec_((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;
const RULE = 'delivery.secret must be "whsec_" followed by canonical, padded base64 (A-Za-z0-9+/) of 24 to 64 random bytes';

/** Throws -32602 `invalid_secret` (never echoing the value) unless `secret` follows the rule. */
export function checkWebhookSecret(secret: unknown): string {
  const text = typeof secret === "string" ? SHAPE.exec(secret)?.[1] : undefined;
  const bytes = text ? Buffer.from(text, "base64") : undefined;
  if (!bytes || bytes.toString("base64") !== text || bytes.length < 24 || bytes.length > 64) throw invalidParams("invalid_secret", RULE);
  return secret as string;
}
