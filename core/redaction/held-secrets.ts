/**
 * Every secret svc itself holds, by exact value, for the `secrets` floor: the config's secret
 * paths (core/config/secrets.ts), the values of credentials.json, the daemon's secret-named
 * environment variables (`EXT_JUDGE_API_KEY`, `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, `GH_TOKEN`, …)
 * and what plugins register through the host service `heldSecrets` (the webhook target's vault).
 * Read afresh each time a redaction is made, so a secret set while the daemon runs is covered.
 */
import type { HeldSecrets, HeldSecretSource } from "../plugin-api/redaction.js";
import { SECRET_ENV_NAME } from "../plugin-api/redaction.js";
import { isSecretPath } from "../config/secrets.js";
import { readJsonFile } from "../storage/json-file.js";
import { token } from "../tokens.js";

/** Shorter values are not matched: they would shred ordinary text, and are not real keys. */
export const MIN_HELD_SECRET_LENGTH = 8;

/** The registry of held-secret sources (the host service `heldSecrets`). */
export class HeldSecretRegistry implements HeldSecrets {
  private readonly sources = new Set<HeldSecretSource>();

  add(source: HeldSecretSource): () => void {
    this.sources.add(source);
    return () => this.sources.delete(source);
  }

  /**
   * Every held value of at least {@link MIN_HELD_SECRET_LENGTH} characters, longest first (so a
   * secret containing another is replaced whole). A source that fails is skipped and named in
   * `failed` (its error is not kept: it may quote the file it read).
   */
  async values(): Promise<{ values: string[]; failed: string[] }> {
    const failed: string[] = [];
    const out = new Set<string>();
    for (const source of this.sources) {
      try {
        for (const v of await source.values())
          if (typeof v === "string" && v.length >= MIN_HELD_SECRET_LENGTH) out.add(v);
      } catch {
        failed.push(source.name);
      }
    }
    return { values: [...out].sort((a, b) => b.length - a.length), failed };
  }
}

export const HELD_SECRETS = token<HeldSecretRegistry>("held-secrets");

/** The string values at the config's secret paths (and the spawn recipes' secret-named env vars). */
export function configSecretValues(value: unknown, at: readonly string[] = []): string[] {
  if (typeof value === "string") return isSecretPath(at) ? [value] : [];
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([k, v]) => configSecretValues(v, [...at, k]));
}

/** The values of the secret-named variables of an environment. */
export function envSecretValues(env: NodeJS.ProcessEnv): string[] {
  return Object.entries(env).flatMap(([k, v]) => (SECRET_ENV_NAME.test(k) && typeof v === "string" ? [v] : []));
}

/** Every value stored in credentials.json (at `path`), whatever its namespace and key. */
export async function credentialValues(path: string): Promise<string[]> {
  const file = await readJsonFile<{ values?: Record<string, Record<string, unknown>> }>(path);
  const namespaces = file && typeof file.values === "object" && file.values !== null ? Object.values(file.values) : [];
  return namespaces.flatMap((ns) =>
    typeof ns === "object" && ns !== null ? Object.values(ns).filter((v): v is string => typeof v === "string") : [],
  );
}
