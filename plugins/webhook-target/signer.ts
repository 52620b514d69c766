import { createHmac } from "node:crypto";

/**
 * Standard Webhooks signing, the only signing code of the webhook target: HMAC-SHA256 over
 * `<msgId>.<timestamp>.<body>` keyed by the base64-decoded part of the secret after `whsec_`,
 * base64-encoded, prefixed `v1,`.
 */
export function signWithKey(key: Buffer, msgId: string, timestamp: number, body: Buffer | string): string {
  const mac = createHmac("sha256", key);
  mac.update(`${msgId}.${timestamp}.`, "utf8");
  mac.update(body);
  return `v1,${mac.digest("base64")}`;
}

/**
 * The `webhook-signature` header value: one `v1,<sig>` per key, space-separated (current key
 * first; two during a rotation window).
 */
export function signatureHeader(
  keys: readonly Buffer[],
  msgId: string,
  timestamp: number,
  body: Buffer | string,
): string {
  return keys.map((k) => signWithKey(k, msgId, timestamp, body)).join(" ");
}
