/**
 * The Standard Webhooks symmetric secret rule, one place for every side that takes a secret (the
 * webhook target, the MCP events extension's `delivery.secret`): `whsec_` followed by base64 that
 * decodes to 24 to 64 bytes. Node's base64 decoder is lenient (it skips stray characters, accepts
 * url-safe letters and missing padding), so the text must also be canonical: re-encoding the key
 * gives back the text exactly.
 */
export const WEBHOOK_SECRET_PREFIX = "whsec_";
export const WEBHOOK_SECRET_MIN_BYTES = 24;
export const WEBHOOK_SECRET_MAX_BYTES = 64;

/** What is allowed, for error messages (never the value itself). */
export const WEBHOOK_SECRET_RULE =
  `a webhook secret is "${WEBHOOK_SECRET_PREFIX}" followed by canonical, padded, standard base64 (A-Za-z0-9+/) ` +
  `that decodes to ${WEBHOOK_SECRET_MIN_BYTES} to ${WEBHOOK_SECRET_MAX_BYTES} bytes`;

const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The HMAC key of a webhook secret, or `undefined` when the secret does not follow the rule. */
export function decodeWebhookSecret(secret: unknown): Buffer | undefined {
  if (typeof secret !== "string" || !secret.startsWith(WEBHOOK_SECRET_PREFIX)) return undefined;
  const text = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  if (text.length === 0 || !CANONICAL_BASE64.test(text)) return undefined;
  const key = Buffer.from(text, "base64");
  if (key.toString("base64") !== text) return undefined;
  if (key.length < WEBHOOK_SECRET_MIN_BYTES || key.length > WEBHOOK_SECRET_MAX_BYTES) return undefined;
  return key;
}
