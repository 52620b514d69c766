import type { Random } from "../../core/plugin-api/index.js";
import {
  SvcError,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SECRET_RULE,
  decodeWebhookSecret,
} from "../../core/plugin-api/index.js";

/** The HMAC key of a webhook secret, or `undefined` when the secret is malformed (the plugin API's one rule). */
export const decodeSecret = decodeWebhookSecret;

/** Like {@link decodeSecret} but throws `code` (default `challenge_failed`) with a message that never echoes the value. */
export function parseSecret(secret: unknown, code: "challenge_failed" | "invalid_input" = "challenge_failed"): Buffer {
  const key = decodeSecret(secret);
  if (!key) throw new SvcError(code, `the webhook secret is malformed: ${WEBHOOK_SECRET_RULE}`);
  return key;
}

/** A fresh secret: 32 random bytes. */
export function generateSecret(random: Random): string {
  return WEBHOOK_SECRET_PREFIX + random.bytes(32).toString("base64");
}
