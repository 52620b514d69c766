/**
 * The one resolver: flags > env > active profile > file > built-in default, key by key.
 * (The config issue extends this with per-key sources; this is the shape every service uses.)
 */
import { SvcError } from "../errors.js";
import type { EffectiveConfig } from "./config-service.js";
import { DEFAULTS, type SvcConfigFile } from "./schema.js";

export interface ConfigFlags {
  port?: number;
  bind?: string;
  authToken?: string;
  profile?: string;
}

export interface ResolveResult {
  effective: EffectiveConfig;
  warnings: string[];
}

export function resolveConfig(file: SvcConfigFile, env: NodeJS.ProcessEnv, flags: ConfigFlags = {}): ResolveResult {
  const warnings: string[] = [];
  const profileName = flags.profile ?? file.activeProfile;
  let profile: Record<string, any> = {};
  if (profileName !== undefined) {
    const found = file.profiles?.[profileName];
    if (found) profile = found;
    else if (flags.profile !== undefined) {
      throw new SvcError("config_invalid", `profile "${profileName}" does not exist; known profiles: ${Object.keys(file.profiles ?? {}).join(", ") || "(none)"}`);
    } else warnings.push(`activeProfile "${profileName}" names no profile; using the top-level configuration`);
  }
  const merged: Record<string, any> = structuredClone(file);
  for (const section of ["daemon", "tunnel", "features"] as const) {
    if (profile[section]) merged[section] = { ...(merged[section] ?? {}), ...profile[section] };
  }
  const effective = deepDefaults(merged, DEFAULTS) as EffectiveConfig;
  const envNum = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === "") return undefined;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new SvcError("config_invalid", `environment variable ${name}=${JSON.stringify(v)} is not a number`);
    return n;
  };
  const stall = envNum("SVC_TURN_STALL_AFTER_MS");
  if (stall !== undefined) effective.daemon.turnStallAfterMs = stall;
  if (flags.port !== undefined) effective.daemon.port = flags.port;
  if (flags.bind !== undefined) effective.daemon.bind = flags.bind;
  if (flags.authToken !== undefined) effective.daemon.authToken = flags.authToken;
  return { effective, warnings };
}

function deepDefaults(value: Record<string, any>, defaults: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...value };
  for (const [k, d] of Object.entries(defaults)) {
    const v = out[k];
    if (v === undefined) out[k] = structuredClone(d);
    else if (isPlainObject(v) && isPlainObject(d)) out[k] = deepDefaults(v, d);
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, any> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
