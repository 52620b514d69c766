/** The `svc config` verbs (loaded lazily by commands/config.ts). */
import { stat } from "node:fs/promises";
import { configFilePath } from "../config/config-path.js";
import { readEffectiveConfig } from "../config/read-effective.js";
import type { ConfigSnapshot } from "../config/config-service.js";
import { leaves, parseKey } from "../config/dotted-path.js";
import { parseCliValue } from "../config/edit.js";
import { configJsonSchemaText } from "../config/json-schema.js";
import { lookupKey } from "../config/lookup.js";
import { formatSource } from "../config/resolve.js";
import { holdsSecret, redactConfigSecrets, secretKeysIn } from "../config/secrets.js";
import { setConfigKey, unsetConfigKey } from "../config/write.js";
import { printJson, println, warn } from "./output.js";


async function snapshot(profile?: string): Promise<ConfigSnapshot> {
  const snap = await readEffectiveConfig(profile !== undefined ? { profile } : {});
  for (const w of snap.warnings) warn(w);
  return snap;
}

export async function showConfig(opts: { json?: boolean; effective?: boolean; reveal?: boolean; profile?: string }): Promise<void> {
  const snap = await snapshot(opts.profile);
  await warnOpenSecretFile(snap);
  const tree = opts.effective ? snap.effective : snap.raw;
  const shown = opts.reveal ? tree : redactConfigSecrets(tree);
  if (opts.json) return printJson(shown);
  if (!opts.effective && !snap.exists) println(`# ${snap.path} does not exist yet; built-in defaults apply (see --effective)`);
  for (const [path, value] of leaves(shown)) {
    const key = path.join(".");
    const source = opts.effective ? snap.sources[key] : undefined;
    println(`${key} = ${JSON.stringify(value)}${source ? `  (${formatSource(source)})` : ""}`);
  }
}

export async function getConfig(key: string, opts: { json?: boolean; source?: boolean; reveal?: boolean; profile?: string }): Promise<void> {
  const found = lookupKey(await snapshot(opts.profile), key, { reveal: opts.reveal });
  for (const [role, why] of Object.entries(found.problems ?? {})) warn(`models.${role} does not resolve: ${why}`);
  if (opts.json) return printJson(opts.source ? found : found.value);
  const isLeaf = found.sources === undefined;
  if (isLeaf) {
    println(`${typeof found.value === "string" ? found.value : JSON.stringify(found.value)}${opts.source ? `  (${found.source})` : ""}`);
    return;
  }
  if (!opts.source) return println(JSON.stringify(found.value, null, 2));
  if (key === "models") {
    for (const [role, v] of Object.entries(found.value as Record<string, object>)) println(`models.${role} = ${JSON.stringify(v)}  (${found.sources![`models.${role}`]})`);
    return;
  }
  for (const [path, v] of leaves(found.value, parseKey(key))) {
    const k = path.join(".");
    println(`${k} = ${JSON.stringify(v)}  (${found.sources![k] ?? "config"})`);
  }
}

export async function setConfig(key: string, text: string, opts: { string?: boolean }): Promise<void> {
  const value = parseCliValue(text, opts.string);
  const path = configFilePath();
  const result = await setConfigKey(path, key, value);
  for (const w of result.warnings) warn(w);
  const secret = holdsSecret(parseKey(key));
  // A secret just written to a file others can read: say so now, not at the next `config show`.
  if (secret) await warnIfReadableByOthers(path, [key]);
  println(secret ? `set ${key}` : `set ${key} = ${JSON.stringify(value)}`);
}

export async function unsetConfig(key: string): Promise<void> {
  const result = await unsetConfigKey(configFilePath(), key);
  for (const w of result.warnings) warn(w);
  println(result.changed ? `unset ${key}` : `${key} was not set; nothing changed`);
}

export function printSchema(): void {
  process.stdout.write(configJsonSchemaText());
}

/** Warns when the file holds secrets (extJudge.apiKey, tokens, API keys in env maps) and group or others can read it. */
async function warnOpenSecretFile(snap: ConfigSnapshot): Promise<void> {
  await warnIfReadableByOthers(snap.path, snap.exists ? secretKeysIn(snap.raw) : []);
}

async function warnIfReadableByOthers(path: string, keys: readonly string[]): Promise<void> {
  if (keys.length === 0) return;
  const mode = (await stat(path)).mode & 0o777;
  const named = keys.length <= 3 ? keys.join(", ") : `${keys.slice(0, 3).join(", ")} and ${keys.length - 3} more`;
  if (mode & 0o044) warn(`${path} holds ${named} and is readable by group or others (mode ${mode.toString(8).padStart(4, "0")}); run chmod 600 ${path}`);
}
