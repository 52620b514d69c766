/** How secrets are hidden, the same for the host and for plugins that show text they did not write. */

/** What a secret value is replaced with in every listing, log line, error and transcript. */
export const REDACTED = "[redacted]";

/**
 * Names of environment variables that hold a secret by convention (`ANTHROPIC_API_KEY`,
 * `GH_TOKEN`, `DB_PASSWORD`): in a spawn recipe's `env` map, and in an agent's environment, their
 * values are secrets.
 */
export const SECRET_ENV_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;

/** One place a plugin keeps secrets (a vault file, a token table): read whenever a redaction is made. */
export interface HeldSecretSource {
  /** Who holds them, for logs (`webhook-target`). Never a secret. */
  readonly name: string;
  /** The secret values held now. Values shorter than 8 characters are ignored. */
  values(): Iterable<string> | Promise<Iterable<string>>;
}

/**
 * The host service `heldSecrets`: a plugin that keeps secrets of its own (the webhook target's
 * vault) adds a source here, and the `secrets` floor of every redaction (docs/redaction.md)
 * replaces their exact values, as it does the config's and credentials.json's.
 */
export interface HeldSecrets {
  /** Adds a source; returns the function that removes it. */
  add(source: HeldSecretSource): () => void;
}
