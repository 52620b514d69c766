import type { Random } from "../../core/plugin-api/index.js";
import { SvcError } from "../../core/plugin-api/index.js";
import { LIMITS } from "./limits.js";

const PREFIX = "whsec_";
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** What is allowed, for error messages (never the value itself). */
const SECRET_RULE =
  `a webhook secret is "${PREFIX}" followed by canonical, padded, standard base64 (A-Za-z0-9+/) ` +
  `that decodes to ${LIMITS.secretMinBytes} to ${LIMITS.secretMaxBytes} bytes`;

/**
 * The HMAC key of a webhook secret, or `undefined` when the secret is malformed. Node's base64
 * decoder is lenient (it skips stray characters, accepts url-safe letters and missing padding),
 * so the text must also be canonical: re-encoding the key gives back the text exactly.
 */
export function decodeSecret(secret: unknown): Buffer | undefined {
  if (typeof secret !== "string" || !secret.startsWith(PREFIX)) return undefined;
  const text = secret.slice(PREFIX.length);
  if (text.length === 0 || !CANONICAL_BASE64.test(text)) return undefined;
  const key = Buffer.from(text, "base64");
  if (key.toString("base64") !== text) return undefined;
  if (key.length < LIMITS.secretMinBytes || key.length > LIMITS.secretMaxBytes) return undefined;
  return key;
}

/** Like {@link decodeSecret} but throws `code` (default `challenge_failed`) with a message that never echoes the value. */
export function parseSecret(secret: unknown, code: "challenge_failed" | "invalid_input" = "challenge_failed"): Buffer {
  const key = decodeSecret(secret);
  if (!key) throw new SvcError(code, `the webhook secret is malformed: ${SECRET_RULE}`);
  return key;
}

/** A fresh secret: 32 random bytes. */
export function generateSecret(random: Random): string {
  return PREFIX + random.bytes(32).toString("base64");
}
