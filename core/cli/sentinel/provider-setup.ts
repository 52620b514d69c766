/**
 * `svc sentinel providers setup <provider> [--set key=value]… [--secret <key>]… [--secret-env <key>=<VAR>]…
 * [--from-file <settings.json>]`: a provider's settings through `POST /sentinel-providers/:provider/setup`
 * (operation provider.setup: the bearer token, which the CLI sends). A secret never comes from the
 * command line, where `ps` shows it: `--secret` reads it at a prompt that does not echo (or from
 * piped stdin), `--secret-env` from the environment, `--from-file` from a file; `--set` refuses
 * a secret-looking key. What the daemon answers shows secrets redacted.
 */
import { parseCliValue } from "../../config/edit.js";
import { looksLikeSecretKey } from "../../redaction/shapes.js";
import { DaemonClient } from "../daemon-client.js";
import { readJsonFlag } from "../json-input.js";
import { printJson, println, usageError } from "../output.js";
import { readPrivateValue } from "../secret-input.js";

export interface ProviderSetupOptions {
  set?: string[];
  secret?: string[];
  secretEnv?: string[];
  fromFile?: string;
  json?: boolean;
}

export const SETUP_EXAMPLE =
  "svc sentinel providers setup webhook --secret secret --set publicBaseUrl=https://hooks.example.com";

function splitPair(flag: string, text: string, form: string): [string, string] {
  const at = text.indexOf("=");
  if (at <= 0) throw usageError(`${flag} expects ${form}, got ${JSON.stringify(text)}`);
  return [text.slice(0, at), text.slice(at + 1)];
}

/** The settings object from the flags; each key given once. */
export async function providerSettings(opts: ProviderSetupOptions): Promise<Record<string, unknown>> {
  const settings: Record<string, unknown> = {};
  const put = (key: string, value: unknown, flag: string) => {
    if (key in settings) throw usageError(`${flag}: the setting ${key} is given twice`);
    settings[key] = value;
  };
  if (opts.fromFile !== undefined) {
    const fromFile = await readJsonFlag("--from-file", `@${opts.fromFile}`);
    if (fromFile === null || typeof fromFile !== "object" || Array.isArray(fromFile))
      throw usageError(`--from-file ${opts.fromFile}: expected a JSON object of settings, e.g. {"secret": "…"}`);
    for (const [k, v] of Object.entries(fromFile)) put(k, v, "--from-file");
  }
  for (const pair of opts.set ?? []) {
    const [key, value] = splitPair("--set", pair, "<key>=<value>");
    if (looksLikeSecretKey(key))
      throw usageError(
        `--set ${key}=…: ${key} looks like a secret, which never goes on the command line (ps shows it to every user); use --secret ${key} (prompt or stdin) or --secret-env ${key}=<VAR>`,
      );
    put(key, parseCliValue(value), "--set");
  }
  for (const pair of opts.secretEnv ?? []) {
    const [key, name] = splitPair("--secret-env", pair, "<key>=<ENV_VAR>");
    const value = process.env[name];
    if (!value) throw usageError(`--secret-env ${key}=${name}: the environment variable ${name} is not set`);
    put(key, value.trim(), "--secret-env");
  }
  const secrets = opts.secret ?? [];
  if (secrets.length > 1 && !process.stdin.isTTY)
    throw usageError(
      "more than one --secret needs a terminal to prompt for each; with piped stdin give one, and the others with --secret-env or --from-file",
    );
  for (const key of secrets) put(key, await readPrivateValue(`${key}`), "--secret");
  if (Object.keys(settings).length === 0)
    throw usageError(`give at least one setting (--set, --secret, --secret-env or --from-file), e.g. ${SETUP_EXAMPLE}`);
  return settings;
}

export async function setupProvider(provider: string, opts: ProviderSetupOptions): Promise<void> {
  const settings = await providerSettings(opts);
  const r = await (await DaemonClient.connect()).request<{ provider: string; configured: Record<string, unknown> }>(
    "POST",
    `/sentinel-providers/${encodeURIComponent(provider)}/setup`,
    { settings },
  );
  if (opts.json) return printJson(r);
  println(`configured ${r.provider}: ${JSON.stringify(r.configured)}`);
}
