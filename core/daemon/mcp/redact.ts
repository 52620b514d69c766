/**
 * Defence in depth for what the daemon streams or shows back: values under secret-looking keys
 * (`secret`, `password`, `authToken`, `apiKey`, …) and strings shaped like known secrets
 * (`whsec_…`, GitHub tokens) are replaced by `[redacted]`.
 *
 * A heuristic on purpose: event data and provider summaries come from plugins in shapes the host
 * does not know, so a key's name and a value's prefix are all there is to go on. Configuration,
 * whose shape is known, is redacted instead by the exact secret paths of its schema
 * (`redactConfigSecrets` in core/config/secrets.ts), which also covers a value read on its own,
 * without its key.
 */
import { REDACTED } from "../../config/secrets.js";
import { looksLikeSecretKey, startsLikeSecret } from "../../redaction/shapes.js";

/**
 * A deep copy of `value` (any JSON-like payload) with the strings under secret-looking keys and
 * the strings shaped like secrets replaced by `[redacted]`; nesting deeper than 32 levels becomes
 * `[truncated]`.
 */
export function redactLikelySecrets(value: unknown, depth = 0): unknown {
  if (depth > 32) return "[truncated]";
  if (typeof value === "string") return startsLikeSecret(value) ? REDACTED : value;
  if (Array.isArray(value)) return value.map((v) => redactLikelySecrets(v, depth + 1));
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = looksLikeSecretKey(k) && typeof v === "string" ? REDACTED : redactLikelySecrets(v, depth + 1);
  }
  return out;
}
