/** How secrets are hidden, the same for the host and for plugins that show text they did not write. */

/** What a secret value is replaced with in every listing, log line, error and transcript. */
export const REDACTED = "[redacted]";

/**
 * Names of environment variables that hold a secret by convention (`ANTHROPIC_API_KEY`,
 * `GH_TOKEN`, `DB_PASSWORD`): in a spawn recipe's `env` map, and in an agent's environment, their
 * values are secrets.
 */
export const SECRET_ENV_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$/i;
