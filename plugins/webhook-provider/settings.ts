/**
 * The webhook provider's settings, kept through the host service "credentials"
 * (`$SVC_HOME/credentials.json`, 0600): the hook `secret` (never shown back) and the
 * `publicBaseUrl` at which GitHub reaches this daemon.
 */
import { SvcError, type CredentialStore } from "../../core/plugin-api/index.js";

export const NS = "provider-webhook";
export const INGRESS_PATH = "/providers/webhook/github";

export interface WebhookSettings {
  secret?: string;
  publicBaseUrl?: string;
}

export async function readSettings(creds: CredentialStore): Promise<WebhookSettings> {
  const [secret, publicBaseUrl] = await Promise.all([creds.get(NS, "secret"), creds.get(NS, "publicBaseUrl")]);
  return { ...(secret ? { secret } : {}), ...(publicBaseUrl ? { publicBaseUrl } : {}) };
}

/** The hook URL GitHub posts to, for a base URL. */
export function hookUrl(publicBaseUrl: string): string {
  return publicBaseUrl.replace(/\/+$/, "") + INGRESS_PATH;
}

/** Validates and stores `{secret?, publicBaseUrl?}` (an empty publicBaseUrl clears it). */
export async function writeSettings(creds: CredentialStore, input: Record<string, unknown>): Promise<void> {
  const unknown = Object.keys(input).filter((k) => k !== "secret" && k !== "publicBaseUrl");
  if (unknown.length)
    throw new SvcError(
      "invalid_input",
      `webhook settings: unknown ${unknown.join(", ")}; allowed: secret, publicBaseUrl`,
    );
  if (input.secret === undefined && input.publicBaseUrl === undefined) {
    throw new SvcError("invalid_input", "webhook settings: give secret and/or publicBaseUrl");
  }
  if (input.secret !== undefined) {
    if (typeof input.secret !== "string" || input.secret.length < 16 || input.secret.length > 256) {
      throw new SvcError("invalid_input", "webhook settings: secret must be a string of 16 to 256 characters", {
        details: [{ path: "secret", message: "a string of 16 to 256 characters" }],
      });
    }
  }
  const base = input.publicBaseUrl;
  if (base !== undefined && base !== "") {
    let u: URL | undefined;
    try {
      u = typeof base === "string" ? new URL(base) : undefined;
    } catch {
      u = undefined;
    }
    if (u?.protocol !== "https:" || u.search || u.hash || u.username || u.password) {
      throw new SvcError(
        "invalid_input",
        "webhook settings: publicBaseUrl must be an https URL without query, fragment or credentials (e.g. https://svc.example.com)",
        {
          details: [{ path: "publicBaseUrl", message: "an https URL" }],
        },
      );
    }
  }
  if (typeof input.secret === "string") await creds.set(NS, "secret", input.secret);
  if (base === "") await creds.delete(NS, "publicBaseUrl");
  else if (typeof base === "string") await creds.set(NS, "publicBaseUrl", base.replace(/\/+$/, ""));
}
