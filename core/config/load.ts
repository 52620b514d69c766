/**
 * Reading config.json: raw JSON tree → `{raw, config, warnings, errors}`. Never creates the file.
 */
import { readTextFile } from "../storage/json-file.js";
import { issuesToDetails, SvcError } from "../errors.js";
import { acpAgentSchema, configSchema, type SvcConfigFile } from "./schema.js";

export interface LoadedConfigFile {
  path: string;
  exists: boolean;
  raw: Record<string, unknown>;
  config: SvcConfigFile;
  warnings: string[];
}

export async function loadConfigFile(path: string): Promise<LoadedConfigFile> {
  const text = await readTextFile(path);
  if (text === undefined) return { path, exists: false, raw: {}, config: {}, warnings: [] };
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SvcError("config_invalid", `${path} is not valid JSON: ${(err as Error).message}`);
  }
  return { path, exists: true, ...validateConfigTree(path, raw) };
}

/** Validates a raw tree; throws `config_invalid` naming the file, the dotted key, what was found and what is allowed. */
export function validateConfigTree(path: string, raw: unknown): { raw: Record<string, unknown>; config: SvcConfigFile; warnings: string[] } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new SvcError("config_invalid", `${path}: the top level must be a JSON object, found ${describe(raw)}`);
  }
  const tree = raw as Record<string, unknown>;
  const result = configSchema.safeParse(tree);
  if (!result.success) {
    const details = issuesToDetails(result.error.issues);
    const first = result.error.issues[0]!;
    const found = describe(valueAt(tree, first.path));
    throw new SvcError("config_invalid", `${path}: ${details[0]!.path}: ${first.message} (found ${found})`, { details });
  }
  const warnings: string[] = [];
  const config = result.data;
  if (config.acpAgents) {
    const kept: Record<string, unknown> = {};
    for (const [slug, entry] of Object.entries(config.acpAgents)) {
      const parsed = acpAgentSchema.safeParse(entry);
      if (parsed.success) kept[slug] = parsed.data;
      else warnings.push(`acpAgents.${slug} dropped: an ACP agent entry needs a string "bin"`);
    }
    config.acpAgents = kept;
  }
  return { raw: tree, config, warnings };
}

export function valueAt(tree: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let cur: unknown = tree;
  for (const seg of path) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

export function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
  if (typeof v === "object") return "an object";
  return `${typeof v} ${String(v)}`;
}
