/** GitHub's `X-Hub-Signature-256`: `sha256=` + hex HMAC-SHA256 of the raw body with the hook secret. */
import { createHmac, timingSafeEqual } from "node:crypto";

export function signBody(body: Buffer | string, secret: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Constant-time check of a signature header against the body; false for a missing or malformed header. */
export function verifySignature(body: Buffer, header: string | string[] | undefined, secret: string): boolean {
  const value = Array.isArray(header) ? header[0] : header;
  const m = /^sha256=([0-9a-fA-F]{64})$/.exec(value?.trim() ?? "");
  if (!m) return false;
  const given = Buffer.from(m[1]!, "hex");
  const expected = createHmac("sha256", secret).update(body).digest();
  return timingSafeEqual(given, expected);
}
