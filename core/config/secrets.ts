/**
 * Which configuration keys hold secrets, and redaction of a config tree for display.
 * Patterns are dotted paths where `*` matches one segment.
 */
export const SECRET_PATTERNS: readonly string[] = [
  "daemon.authToken",
  "tunnel.token",
  "extJudge.apiKey",
  "defaults.adapters.*.auth.token",
  "defaults.adapters.*.auth.apiKey",
  "profiles.*.daemon.authToken",
  "profiles.*.tunnel.token",
];

export const REDACTED = "[redacted]";

/** True when the dotted path (as segments) names a secret. */
export function isSecretPath(path: readonly string[]): boolean {
  return SECRET_PATTERNS.some((p) => {
    const segs = p.split(".");
    return segs.length === path.length && segs.every((s, i) => s === "*" || s === path[i]);
  });
}

/** True when a secret lives at or under `path`. */
export function holdsSecret(path: readonly string[]): boolean {
  return SECRET_PATTERNS.some((p) => {
    const segs = p.split(".");
    return segs.length >= path.length && path.every((s, i) => segs[i] === "*" || segs[i] === s);
  });
}

/** A deep copy of `value` (found at `at`) with every secret string replaced by {@link REDACTED}. */
export function redactSecrets<T>(value: T, at: readonly string[] = []): T {
  if (isSecretPath(at) && value !== undefined) return REDACTED as T;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, at)) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactSecrets(v, [...at, k]);
    return out as T;
  }
  return value;
}
