/**
 * `svc webhooks add <url> --subject <s>…`: creates a sentinel with a webhook target through the
 * daemon's sentinel store (SPEC.md keeps `sentinel watch` for session targets). The daemon
 * challenge-verifies the URL before anything is stored. The secret never comes on the command line
 * (secret-input.ts): a prompt, piped stdin, a file or an environment variable, else generated.
 */
import { randomBytes } from "node:crypto";
import { printJson, println, usageError } from "../output.js";
import { privateSecretFrom } from "../secret-input.js";
import { matchClauses, parseUntil, postSentinel } from "../sentinel/watch.js";
import { redactUrl } from "../../redaction/url.js";

export interface AddWebhookOptions {
  subject?: string[];
  types?: string;
  until?: string;
  provider?: string;
  /** `--secret` alone or `--secret -`: prompted for, or read from piped stdin; a value is refused. */
  secret?: string | boolean;
  secretFile?: string;
  secretEnv?: string;
  label?: string;
  group?: string;
  idempotencyKey?: string;
  json?: boolean;
}

export const ADD_EXAMPLE =
  "svc webhooks add https://hooks.example.com/svc --subject 'ci:api*' --secret-env WEBHOOK_SECRET";

export function buildWebhookSpec(url: string, opts: AddWebhookOptions, secret: string): Record<string, unknown> {
  if (!opts.subject?.length) throw usageError(`give at least one --subject to match, e.g. ${ADD_EXAMPLE}`);
  return {
    match: matchClauses(opts.subject, opts.types),
    until: parseUntil(opts.until ?? "never"),
    target: { kind: "webhook", url, secret },
    ...(opts.provider ? { provider: opts.provider } : {}),
    ...(opts.label ? { label: opts.label } : {}),
    ...(opts.group ? { group: opts.group } : {}),
  };
}

/** A fresh Standard Webhooks secret: 32 random bytes, canonical base64, as the daemon generates. */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export async function addWebhook(url: string, opts: AddWebhookOptions): Promise<void> {
  const given = await privateSecretFrom(opts, "webhook secret (whsec_…)");
  if (opts.idempotencyKey !== undefined && given === undefined) {
    // A generated secret differs on every run, so a retry would be a different request (refused).
    throw usageError(
      "--idempotency-key needs the secret given (--secret, --secret-file or --secret-env): a generated secret differs on every run, so a retry would not be the same request",
    );
  }
  const secret = given ?? generateWebhookSecret();
  const spec = buildWebhookSpec(url, opts, secret);
  const created = await postSentinel(spec, opts.idempotencyKey);
  if (opts.json) return printJson(given === undefined ? { ...created, secret } : created);
  const cached = (created.spec.target as { verification?: { cached?: boolean } }).verification?.cached === true;
  println(
    `${created.id} delivering ${created.spec.match.map((m) => m.subject).join(", ")} (provider ${created.spec.provider}) → ${redactUrl(url)} (${cached ? "verified (cached): this URL answered a challenge for this secret within the last 10 minutes" : "challenge verified"})`,
  );
  if (given === undefined) {
    println("secret (shown once, store it with your receiver now):");
    println(secret);
  }
}
