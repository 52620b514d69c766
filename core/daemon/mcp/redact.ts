/**
 * Defence in depth for what the daemon streams or shows back: values under secret-looking keys
 * (`secret`, `password`, `authToken`, `apiKey`, …) and strings shaped like known secrets
 * (`whsec_…`, GitHub tokens) are replaced by `[redacted]`.
 */
const SECRET_KEY_ENDINGS = ["secret", "password", "passwd", "authorization", "apikey", "authtoken", "accesstoken", "refreshtoken", "bearertoken", "privatekey"];
const SECRET_KEYS = new Set(["token", "credential", "credentials"]);

function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[-_]/g, "");
  return SECRET_KEYS.has(k) || SECRET_KEY_ENDINGS.some((end) => k.endsWith(end));
}
const SECRET_VALUE = /^(whsec_|swsec_|gh[pousr]_|github_pat_)/;

/** A deep copy of `value` with secret-looking keys and values replaced by `[redacted]`. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (depth > 32) return "[truncated]";
  if (typeof value === "string") return SECRET_VALUE.test(value) ? "[redacted]" : value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = isSecretKey(k) && typeof v === "string" ? "[redacted]" : redactSecrets(v, depth + 1);
  }
  return out;
}

