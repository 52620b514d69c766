/**
 * The configuration as services see it: the latest good effective configuration, its warnings,
 * and a reload that keeps the last good one when the file turns bad.
 */
import type { DEFAULTS, SvcConfigFile } from "./schema.js";

/** Where an effective value came from (highest precedence first: flag, env, profile, config, default). */
export type ValueSource =
  | { kind: "flag"; name: string }
  | { kind: "env"; name: string }
  | { kind: "profile"; name: string }
  | { kind: "config" }
  | { kind: "default" };

export interface ConfigSnapshot {
  /** The raw file tree as parsed from JSON (`{}` when the file is absent). */
  raw: Record<string, unknown>;
  /** The effective configuration: defaults, file, active profile, env and flags folded in. */
  effective: EffectiveConfig;
  warnings: string[];
  /** Where each leaf of `effective` came from, keyed by dotted path. */
  sources: Record<string, ValueSource>;
  /** The config file's absolute path. */
  path: string;
  /** Whether the file exists (it is created lazily, by the first `config set`). */
  exists: boolean;
  /** The profile folded in, if any. */
  profile?: string;
}

/** The effective configuration: every defaulted section and field present. */
export type EffectiveConfig = WithDefaults<SvcConfigFile, typeof DEFAULTS>;

type Widen<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends boolean
      ? boolean
      : T extends readonly (infer U)[]
        ? Widen<U>[]
        : T extends object
          ? { -readonly [K in keyof T]: Widen<T[K]> }
          : T;

type WithDefaults<F, D> = { [K in keyof F as K extends keyof D ? never : K]: F[K] } & {
  -readonly [K in keyof D]-?: K extends keyof F
    ? D[K] extends readonly unknown[]
      ? NonNullable<F[K]>
      : string extends keyof D[K]
        ? NonNullable<F[K]>
        : D[K] extends object
          ? WithDefaults<NonNullable<F[K]>, D[K]>
          : NonNullable<F[K]>
    : Widen<D[K]>;
};

export interface ConfigService {
  /** The latest good snapshot. */
  current(): ConfigSnapshot;
  /** Re-reads the file; on error keeps the last good snapshot and returns the error. */
  reload(): Promise<{ ok: true; snapshot: ConfigSnapshot } | { ok: false; error: Error }>;
  /** Called after every successful reload. */
  onChange(listener: (snapshot: ConfigSnapshot) => void): () => void;
}
