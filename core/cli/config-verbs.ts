/** The `svc config` verbs (loaded lazily by commands/config.ts). */
import { configFilePath } from "../config/config-path.js";
import { readEffectiveConfig } from "../config/read-effective.js";
import type { ConfigSnapshot } from "../config/config-service.js";
import { leaves, parseKey } from "../config/dotted-path.js";
import { exposedSecrets, exposedWarning } from "../config/file-mode.js";
import { configJsonSchemaText } from "../config/json-schema.js";
import { lookupKey } from "../config/lookup.js";
import { formatSource } from "../config/resolve.js";
import { holdsSecret, redactConfigSecrets } from "../config/secrets.js";
import { setConfigKey, unsetConfigKey } from "../config/write.js";
import { configSetInput } from "./config-set-input.js";
import { printJson, println, warn } from "./output.js";

async function snapshot(profile?: string): Promise<ConfigSnapshot> {
  const snap = await readEffectiveConfig(profile !== undefined ? { profile } : {});
  for (const w of snap.warnings) warn(w);
  return snap;
}

export async function showConfig(opts: {
  json?: boolean;
  effective?: boolean;
  reveal?: boolean;
  profile?: string;
}): Promise<void> {
  const snap = await snapshot(opts.profile);
  // A file holding secrets that group or others can read: said on stderr, naming the keys, never their values.
  const exposed = snap.exists ? await exposedSecrets(snap.path, snap.raw) : undefined;
  if (exposed) warn(exposedWarning(snap.path, exposed));
  const tree = opts.effective ? snap.effective : snap.raw;
  const shown = opts.reveal ? tree : redactConfigSecrets(tree);
  if (opts.json) return printJson(shown);
  if (!opts.effective && !snap.exists)
    println(`# ${snap.path} does not exist yet; built-in defaults apply (see --effective)`);
  for (const [path, value] of leaves(shown)) {
    const key = path.join(".");
    const source = opts.effective ? snap.sources[key] : undefined;
    println(`${key} = ${JSON.stringify(value)}${source ? `  (${formatSource(source)})` : ""}`);
  }
}

export async function getConfig(
  key: string,
  opts: { json?: boolean; source?: boolean; reveal?: boolean; profile?: string },
): Promise<void> {
  const found = lookupKey(await snapshot(opts.profile), key, { reveal: opts.reveal });
  for (const [role, why] of Object.entries(found.problems ?? {})) warn(`models.${role} does not resolve: ${why}`);
  if (opts.json) return printJson(opts.source ? found : found.value);
  const isLeaf = found.sources === undefined;
  if (isLeaf) {
    println(
      `${typeof found.value === "string" ? found.value : JSON.stringify(found.value)}${opts.source ? `  (${found.source})` : ""}`,
    );
    return;
  }
  if (!opts.source) return println(JSON.stringify(found.value, null, 2));
  if (key === "models") {
    for (const [role, v] of Object.entries(found.value as Record<string, object>))
      println(`models.${role} = ${JSON.stringify(v)}  (${found.sources![`models.${role}`]})`);
    return;
  }
  for (const [path, v] of leaves(found.value, parseKey(key))) {
    const k = path.join(".");
    println(`${k} = ${JSON.stringify(v)}  (${found.sources![k] ?? "config"})`);
  }
}

/** `svc config set <key> [value]`: a secret comes from stdin, a prompt or `--from-file`, never the command line (config-set-input.ts). */
export async function setConfig(
  key: string,
  text: string | undefined,
  opts: { string?: boolean; fromFile?: string },
): Promise<void> {
  const { value, privateInput } = await configSetInput(key, text, opts);
  const result = await setConfigKey(configFilePath(), key, value, { privateInput });
  for (const w of result.warnings) warn(w);
  println(holdsSecret(parseKey(key)) ? `set ${key}` : `set ${key} = ${JSON.stringify(value)}`);
}

export async function unsetConfig(key: string): Promise<void> {
  const result = await unsetConfigKey(configFilePath(), key);
  for (const w of result.warnings) warn(w);
  println(result.changed ? `unset ${key}` : `${key} was not set; nothing changed`);
}

export function printSchema(): void {
  process.stdout.write(configJsonSchemaText());
}
