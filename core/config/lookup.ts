/**
 * Reading one dotted key of the effective configuration with where it came from; shared by
 * `svc config get` and the `config_get` tool. `models` and `models.<role>` read the resolved role
 * table. Secrets are redacted unless asked.
 */
import { SvcError } from "../errors.js";
import type { ConfigSnapshot } from "./config-service.js";
import { getAt, parseKey } from "./dotted-path.js";
import { resolveRoleTable as resolveTable, type ResolvedModelRole } from "./models.js";
import { formatSource, sourcesUnder } from "./resolve.js";
import { redactConfigSecrets } from "./secrets.js";

export interface KeyLookup {
  key: string;
  value: unknown;
  /** The source of a leaf value. */
  source?: string;
  /** The sources of the leaves under an object value, keyed by dotted path. */
  sources?: Record<string, string>;
  /** For `models`: the roles that do not resolve (a `role:` cycle or an undefined role), each with why. */
  problems?: Record<string, string>;
}

export function lookupKey(snapshot: ConfigSnapshot, key: string, options: { reveal?: boolean } = {}): KeyLookup {
  const segs = parseKey(key);
  if (segs[0] === "models") return lookupModels(snapshot, segs);
  const value = getAt(snapshot.effective, segs);
  if (value === undefined) throw new SvcError("not_found", `${key} is not set and has no default`);
  const shown = options.reveal ? value : redactConfigSecrets(value, segs);
  const under = sourcesUnder(snapshot.sources, segs.join("."));
  const exact = under[segs.join(".")];
  if (exact && Object.keys(under).length === 1) return { key, value: shown, source: formatSource(exact) };
  return {
    key,
    value: shown,
    sources: Object.fromEntries(Object.entries(under).map(([k, s]) => [k, formatSource(s)])),
  };
}

/**
 * The resolved model role table (config and built-in layers), with sources; a role that does not
 * resolve (a cycle hand-written into config.json) is in `problems`, naming the chain, and the
 * other roles still resolve.
 */
export function modelRoleTable(snapshot: ConfigSnapshot): {
  roles: Record<string, ResolvedModelRole>;
  problems: Record<string, string>;
} {
  const { roles, problems } = resolveTable(snapshot.effective);
  return { roles, problems: messagesOf(problems) };
}

function messagesOf(problems: Record<string, SvcError>): Record<string, string> {
  return Object.fromEntries(Object.entries(problems).map(([role, err]) => [role, err.message]));
}

function lookupModels(snapshot: ConfigSnapshot, segs: string[]): KeyLookup {
  const { roles: table, problems } = resolveTable(snapshot.effective);
  const broken = Object.keys(problems).length ? { problems: messagesOf(problems) } : {};
  if (segs.length === 1) {
    const value = Object.fromEntries(
      Object.entries(table).map(([role, { source: _s, ...v }]) => [
        role,
        v.route === undefined && v.profile === undefined ? v.model : v,
      ]),
    );
    return {
      key: "models",
      value,
      sources: Object.fromEntries(Object.entries(table).map(([role, r]) => [`models.${role}`, r.source])),
      ...broken,
    };
  }
  const role = segs[1]!;
  const problem = problems[role];
  if (problem) throw new SvcError(problem.code, `models.${role}: ${problem.message}`);
  const hit = table[role];
  if (!hit)
    throw new SvcError(
      "not_found",
      `models.${role} is not a known model role (known: ${Object.keys(table).join(", ")})`,
    );
  const { source, ...rest } = hit;
  return {
    key: `models.${role}`,
    value: rest.route === undefined && rest.profile === undefined ? rest.model : rest,
    source,
  };
}
