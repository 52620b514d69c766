/**
 * The one resolver, used by the daemon and every verb: per key, verb flags > env overrides >
 * active profile (daemon, tunnel, features only) > config.json > built-in default. It records
 * where each leaf value came from, for `svc config get --source` and the `config_get` tool.
 */
import { isAbsolute, join, resolve as resolvePath } from "node:path";
import type { z } from "zod";
import { SvcError } from "../errors.js";
import { FILES, expandTilde, svcHome } from "../storage/paths.js";
import type { EffectiveConfig, ValueSource } from "./config-service.js";

export type { ValueSource };
import { getAt, leaves, setAt, splitKey } from "./dotted-path.js";
import { ENV_OVERRIDES, readEnvOverride } from "./env-overrides.js";
import { keyTraits } from "./key-traits.js";
import { DEFAULTS, type SvcConfigFile } from "./schema.js";

export interface ConfigFlags {
  port?: number;
  bind?: string;
  authToken?: string;
  /** The token read from the file named by `svc serve --auth-token-file` (the token itself, not the path). */
  authTokenFromFile?: string;
  profile?: string;
  /** `svc serve --connect <wss-url>`: sets tunnel.host and connects at start. */
  connect?: string;
  /** `svc serve --store <url>`: sets store.url (a URL without a password: core/store/select.ts). */
  store?: string;
}

/** Where a value came from. */

export interface ResolveResult {
  effective: EffectiveConfig;
  warnings: string[];
  /** Source of every leaf, keyed by dotted path. */
  sources: Record<string, ValueSource>;
  /** The profile folded in, if any. */
  profile?: string;
}

/** A flag the resolver knows: the dotted key it sets, its spelling on the command line, the key's schema and whether it is a secret (secrets.ts). */
export interface FlagKey {
  flag: keyof ConfigFlags;
  key: string;
  spelling: string;
  schema: z.ZodType;
  secret: boolean;
}

const flagKey = (f: Omit<FlagKey, "schema" | "secret">): FlagKey => ({ ...f, ...keyTraits(f.key) });

/** Flags the resolver knows. A value is checked against the key's field schema, as the file and env overrides are. */
export const FLAG_KEYS: readonly FlagKey[] = [
  flagKey({ flag: "port", key: "daemon.port", spelling: "--port" }),
  flagKey({ flag: "bind", key: "daemon.bind", spelling: "--bind" }),
  flagKey({ flag: "authToken", key: "daemon.authToken", spelling: "--auth-token" }),
  flagKey({ flag: "authTokenFromFile", key: "daemon.authToken", spelling: "--auth-token-file" }),
  flagKey({ flag: "connect", key: "tunnel.host", spelling: "--connect" }),
  flagKey({ flag: "store", key: "store.url", spelling: "--store" }),
];

/** Throws a `usage` error naming the flag when `value` is not allowed for its key (a secret is not quoted). */
function checkFlag(f: FlagKey, value: unknown): void {
  const parsed = f.schema.safeParse(value);
  if (parsed.success) return;
  const shown = f.secret ? "(value hidden)" : typeof value === "number" ? String(value) : JSON.stringify(value);
  const allowed = parsed.error.issues
    .map((i) =>
      /^Too small: expected string to have >=1 characters$/.test(i.message) ? "must not be empty" : i.message,
    )
    .join("; ");
  throw new SvcError("usage", `${f.spelling} ${shown} is invalid: ${allowed} (it sets ${f.key})`);
}

export const PROFILE_SECTIONS = ["daemon", "tunnel", "features"] as const;

/** Resolves the effective configuration. `home` is `$SVC_HOME` (default from `env`). */
export function resolveConfig(
  file: SvcConfigFile,
  env: NodeJS.ProcessEnv,
  flags: ConfigFlags = {},
  home: string = svcHome(env),
): ResolveResult {
  const warnings: string[] = [];
  const sources: Record<string, ValueSource> = {};
  let eff = structuredClone(DEFAULTS) as unknown as Record<string, unknown>;
  markLeaves(sources, [], DEFAULTS, { kind: "default" });
  overlay(eff, file as Record<string, unknown>, [], sources);

  const profileName = pickProfile(file, flags, warnings);
  if (profileName !== undefined) {
    const profile = file.profiles![profileName]!;
    for (const section of PROFILE_SECTIONS) {
      const block = profile[section] as Record<string, unknown> | undefined;
      if (!block) continue;
      const target = eff[section] as Record<string, unknown>;
      for (const [k, v] of Object.entries(block)) {
        if (v === undefined) continue;
        target[k] = structuredClone(v);
        setSource(sources, [section, k], { kind: "profile", name: profileName }, true);
      }
    }
  }

  for (const o of ENV_OVERRIDES) {
    const value = readEnvOverride(o, env);
    if (value === undefined) continue;
    const path = splitKey(o.key);
    if (o.afterFile && getAt(eff, path) !== undefined) continue;
    eff = setAt(eff, path, value);
    setSource(sources, path, { kind: "env", name: o.name });
  }

  for (const f of FLAG_KEYS) {
    const value = flags[f.flag];
    if (value === undefined) continue;
    checkFlag(f, value);
    const path = splitKey(f.key);
    eff = setAt(eff, path, value);
    setSource(sources, path, { kind: "flag", name: f.spelling });
  }

  const effective = eff as unknown as EffectiveConfig;
  finishPaths(effective, sources, home);
  if (sources["pairing.autoconnect"]?.kind === "default")
    effective.pairing.autoconnect = effective.pairing.rendezvous !== "";
  return { effective, warnings, sources, ...(profileName !== undefined ? { profile: profileName } : {}) };
}

/** "flag --port", "env SVC_X", "profile work", "config", "default". */
export function formatSource(s: ValueSource): string {
  return s.kind === "flag" || s.kind === "env" || s.kind === "profile" ? `${s.kind} ${s.name}` : s.kind;
}

/** The sources of `key` and of everything under it (dotted key → source). */
export function sourcesUnder(sources: Record<string, ValueSource>, key: string): Record<string, ValueSource> {
  const out: Record<string, ValueSource> = {};
  for (const [k, s] of Object.entries(sources)) if (k === key || k.startsWith(key + ".")) out[k] = s;
  if (Object.keys(out).length === 0) {
    for (const [k, s] of Object.entries(sources)) if (key.startsWith(k + ".")) out[k] = s;
  }
  return out;
}

function pickProfile(file: SvcConfigFile, flags: ConfigFlags, warnings: string[]): string | undefined {
  const known = Object.keys(file.profiles ?? {});
  if (flags.profile !== undefined) {
    if (!known.includes(flags.profile)) {
      throw new SvcError(
        "config_invalid",
        `--profile ${flags.profile}: no such profile in config.json; known profiles: ${known.join(", ") || "(none)"}`,
      );
    }
    return flags.profile;
  }
  if (file.activeProfile === undefined) return undefined;
  if (known.includes(file.activeProfile)) return file.activeProfile;
  warnings.push(
    `activeProfile "${file.activeProfile}" names no profile (known: ${known.join(", ") || "none"}); using the top-level configuration`,
  );
  return undefined;
}

function finishPaths(eff: EffectiveConfig, sources: Record<string, ValueSource>, home: string): void {
  const fromDefault = (key: string) => sources[key]?.kind === "default";
  eff.worktrees.root = fromDefault("worktrees.root") ? join(home, FILES.worktrees) : expandTilde(eff.worktrees.root);
  const events = expandTilde(eff.sessions.eventsDir);
  eff.sessions.eventsDir = fromDefault("sessions.eventsDir")
    ? join(home, FILES.sessions)
    : isAbsolute(events)
      ? events
      : resolvePath(home, events);
  const byRepo: Record<string, number> = {};
  for (const [k, v] of Object.entries(eff.worktrees.provisionConcurrencyByRepo)) byRepo[expandTilde(k)] = v;
  eff.worktrees.provisionConcurrencyByRepo = byRepo;
}

function overlay(
  target: Record<string, unknown>,
  layer: Record<string, unknown>,
  at: string[],
  sources: Record<string, ValueSource>,
): void {
  for (const [k, v] of Object.entries(layer)) {
    if (v === undefined) continue;
    const path = [...at, k];
    const cur = target[k];
    if (isPlainObject(v) && isPlainObject(cur)) {
      overlay(cur, v, path, sources);
    } else {
      target[k] = structuredClone(v);
      setSource(sources, path, { kind: "config" }, isPlainObject(cur));
      if (isPlainObject(v)) markLeaves(sources, path, v, { kind: "config" });
    }
  }
}

function markLeaves(sources: Record<string, ValueSource>, at: string[], value: unknown, source: ValueSource): void {
  for (const [path] of leaves(value, at)) setSource(sources, path, source);
}

/** Records `source` for `path`, replacing the source of any enclosing leaf (and, when asked, of any leaf under it). */
function setSource(
  sources: Record<string, ValueSource>,
  path: string[],
  source: ValueSource,
  replacesSubtree = false,
): void {
  const key = path.join(".");
  for (let i = 1; i < path.length; i++) delete sources[path.slice(0, i).join(".")];
  if (replacesSubtree) for (const k of Object.keys(sources)) if (k.startsWith(key + ".")) delete sources[k];
  sources[key] = source;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
