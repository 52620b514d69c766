/**
 * Reading config.json: raw JSON tree → `{raw, config, warnings}`. Never creates the file.
 * A file that is not JSON, or a key of the wrong type, is a `config_invalid` error naming the
 * file, the dotted key, what was found and what is allowed. Entries SPEC.md says are dropped
 * (an `acpAgents` entry that does not match its schema, e.g. without a string `bin`; an invalid
 * `provisionConcurrencyByRepo` entry) are dropped with a warning naming the issue, and the rest loads.
 */
import { jsonFault } from "../runtime/json-fault.js";
import { readTextFile } from "../storage/json-file.js";
import { formatPath, issuesToDetails, SvcError } from "../errors.js";
import { acpAgentSchema, tolerantConfigSchema, type AcpAgentEntry, type SvcConfigFile } from "./schema.js";
import { valueAt } from "./dotted-path.js";
import { holdsSecret, isSecretPath } from "./secrets.js";

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
  return { path, exists: true, ...validateConfigTree(path, parseConfigText(path, text)) };
}

/** Parses the file's text; throws `config_invalid` naming the file when it is not JSON. */
export function parseConfigText(path: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new SvcError("config_invalid", `${path} is not valid JSON (${jsonFault(text)}); fix it by hand or remove it`);
  }
}

/** Validates a raw tree; throws `config_invalid` naming the file, the dotted key, what was found and what is allowed. */
export function validateConfigTree(
  path: string,
  raw: unknown,
): { raw: Record<string, unknown>; config: SvcConfigFile; warnings: string[] } {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new SvcError("config_invalid", `${path}: the top level must be a JSON object, found ${describe(raw)}`);
  }
  const tree = raw as Record<string, unknown>;
  const result = tolerantConfigSchema.safeParse(tree);
  if (!result.success) {
    const details = issuesToDetails(result.error.issues);
    const lines = result.error.issues.map((issue) => {
      const key = formatPath("", issue.path);
      const found = valueAt(tree, issue.path);
      return `key ${key}: ${foundAllowed(issue.path, found, issue.message)}`;
    });
    throw new SvcError("config_invalid", `${path}: ${lines.join("\n  ")}`, { details });
  }
  const warnings: string[] = [];
  const config = result.data as SvcConfigFile & Record<string, unknown>;
  if (config.acpAgents) {
    const kept: Record<string, AcpAgentEntry> = {};
    for (const [slug, entry] of Object.entries(config.acpAgents as Record<string, unknown>)) {
      const parsed = acpAgentSchema.safeParse(entry);
      if (parsed.success) kept[slug] = parsed.data;
      else {
        const issue = parsed.error.issues[0]!;
        const at = ["acpAgents", slug, ...issue.path.map(String)];
        warnings.push(
          `${path}: acpAgents.${slug} dropped: key ${at.join(".")}: ${foundAllowed(at, valueAt(entry, issue.path), issue.message)}`,
        );
      }
    }
    config.acpAgents = kept;
  }
  const byRepo = config.worktrees?.provisionConcurrencyByRepo as Record<string, unknown> | undefined;
  if (byRepo) {
    const kept: Record<string, number> = {};
    for (const [repo, cap] of Object.entries(byRepo)) {
      if (repo !== "" && typeof cap === "number" && Number.isInteger(cap) && cap >= 0) kept[repo] = cap;
      else
        warnings.push(
          `${path}: worktrees.provisionConcurrencyByRepo.${repo} ignored: the cap must be an integer >= 0, found ${describe(cap)}`,
        );
    }
    config.worktrees!.provisionConcurrencyByRepo = kept;
  }
  return { raw: tree, config, warnings };
}

/**
 * "found <what>, allowed: <what is allowed>", or the schema's own sentence when it already names
 * both ("must be 0..65535, got 70000", see schema.ts's bounded). A secret value is never shown.
 */
export function foundAllowed(path: ReadonlyArray<PropertyKey>, found: unknown, message: string): string {
  const shown = describeAt(path, found);
  if (/^must be .*, got /.test(message) && !shown.endsWith("(value hidden)")) return message;
  return `found ${shown}, allowed: ${allowedFrom(message.replace(/, got .*$/, ""))}`;
}

/** Turns a zod issue message into "what is allowed". */
export function allowedFrom(message: string): string {
  const type = /^Invalid input: expected (\w+), received \w+$/.exec(message);
  if (type) return type[1] === "nonoptional" ? "a value" : `${/^[aeiou]/.test(type[1]!) ? "an" : "a"} ${type[1]}`;
  const option = /^Invalid option: expected one of (.+)$/.exec(message);
  if (option) return `one of ${option[1]!.split("|").join(", ")}`;
  return message.replace(/^Invalid input: /, "");
}

/**
 * {@link describe}, except that a value at a key that is, holds or sits under a secret (secrets.ts:
 * the schema's secret keys and the secret-named variables of env maps) is shown by its kind only:
 * `extJudge: "sk-…"` (a string where an object holding `apiKey` belongs) must not reach an error
 * message, a tool result or a log.
 */
export function describeAt(path: ReadonlyArray<PropertyKey>, v: unknown): string {
  const segs = path.map(String);
  const secret = holdsSecret(segs) || segs.some((_, i) => isSecretPath(segs.slice(0, i + 1)));
  if (!secret || typeof v === "object" || v === undefined) return describe(v);
  return `${/^[aeiou]/.test(typeof v) ? "an" : "a"} ${typeof v} (value hidden)`;
}

export function describe(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
  if (typeof v === "object") return "an object";
  return `the ${typeof v} ${String(v)}`;
}
