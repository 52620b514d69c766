/**
 * Which configuration keys hold secrets, and redaction of a config tree for display.
 * Patterns are dotted paths where `*` matches one segment.
 *
 * This is the config schema's own, exact list, matched by path: a value is a secret because of
 * where it sits, whatever its type, and is still known as one when read on its own (`svc config
 * get tunnel.token` hands over just the string, with no key to judge). The key-name heuristic of
 * `redactLikelySecrets` (core/daemon/mcp/redact.ts) is for payloads whose shape the host does not
 * know; it cannot see a leaf's path, so the two rules are separate on purpose.
 */
import { splitKey } from "./dotted-path.js";
import { REDACTED, SECRET_ENV_NAME } from "../plugin-api/redaction.js";

export const SECRET_PATTERNS: readonly string[] = [
  "daemon.authToken",
  "tunnel.token",
  "extJudge.apiKey",
  "defaults.adapters.*.auth.token",
  "defaults.adapters.*.auth.apiKey",
  "profiles.*.daemon.authToken",
  "profiles.*.tunnel.token",
  // a postgres:// URL may carry the login's password
  "store.url",
];

export { REDACTED, SECRET_ENV_NAME };

/** The spawn recipes' environment maps, whose secret-named variables ({@link SECRET_ENV_NAME}) are secrets. */
const SECRET_ENV_MAPS: readonly string[] = ["acpAgents.*.env", "terminalPresets.*.env"];

/** One path segment of a secret: a name, `*` (any name), or a rule for the name. */
type Segment = string | RegExp;

/** {@link SECRET_PATTERNS} and the secret variables of {@link SECRET_ENV_MAPS}, as segments. */
const SECRET_PATHS: readonly Segment[][] = [
  ...SECRET_PATTERNS.map(splitKey),
  ...SECRET_ENV_MAPS.map((m) => [...splitKey(m), SECRET_ENV_NAME]),
];

const matches = (seg: Segment, name: string): boolean =>
  typeof seg === "string" ? seg === "*" || seg === name : seg.test(name);

/** True when the dotted path (as segments) names a secret. */
export function isSecretPath(path: readonly string[]): boolean {
  return SECRET_PATHS.some((segs) => segs.length === path.length && segs.every((s, i) => matches(s, path[i]!)));
}

/** True when a secret lives at or under `path`. */
export function holdsSecret(path: readonly string[]): boolean {
  return SECRET_PATHS.some((segs) => segs.length >= path.length && path.every((s, i) => matches(segs[i]!, s)));
}

/**
 * A deep copy of the config value `value` (found at the config path `at`, the root by default)
 * with the value at every secret path ({@link SECRET_PATTERNS}, and the secret-named variables of
 * the spawn recipes' `env` maps) replaced by {@link REDACTED}.
 */
export function redactConfigSecrets<T>(value: T, at: readonly string[] = []): T {
  if (isSecretPath(at) && value !== undefined) return REDACTED as T;
  if (Array.isArray(value)) return value.map((v) => redactConfigSecrets(v, at)) as T;
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactConfigSecrets(v, [...at, k]);
    return out as T;
  }
  return value;
}

/** The dotted keys of the secrets present in a config tree, in document order. */
export function secretKeysIn(value: unknown, at: readonly string[] = []): string[] {
  if (isSecretPath(at)) return value === undefined ? [] : [at.join(".")];
  if (typeof value !== "object" || value === null || Array.isArray(value) || !holdsSecret(at)) return [];
  return Object.entries(value).flatMap(([k, v]) => secretKeysIn(v, [...at, k]));
}
