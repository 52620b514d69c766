/** Standard Webhooks signing, as a team without svc would write it with node:crypto. */
import { createHmac } from "node:crypto";

/** The HMAC key of a `whsec_<base64>` secret. */
export function secretKey(secret: string): Buffer {
  return Buffer.from(secret.replace(/^whsec_/, ""), "base64");
}

/** The `webhook-*` headers of one delivery of `body` with message id `id`, signed now. */
export function signedHeaders(key: Buffer, id: string, body: string): Record<string, string> {
  const ts = Math.floor(Date.now() / 1000);
  const signature = createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64");
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(ts),
    "webhook-signature": `v1,${signature}`,
  };
}
