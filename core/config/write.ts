/**
 * `config set` / `config unset` (CLI verbs and the `config_set` tool share these): edit the raw
 * tree at a dotted key, validate the whole resulting tree, then write it under the cross-process
 * lock. Anything refused leaves the file byte-for-byte unchanged; no write creates the file
 * except a successful set, which creates it 0600 (file-mode.ts).
 */
import { SvcError } from "../errors.js";
import { updateJsonFile } from "../storage/json-file.js";
import { getAt, parseKey, setAt, unsetAt, valueAt } from "./dotted-path.js";
import { CONFIG_WRITE, exposedSecrets, exposedWarning } from "./file-mode.js";
import { foundAllowed, validateConfigTree } from "./load.js";
import { unknownKeyWarning } from "./unknown-keys.js";
import { modelsProblem, unknownModelWarnings } from "./models.js";
import { acpAgentSchema, modelsSchema, worktreesSchema } from "./schema.js";
import { holdsSecret } from "./secrets.js";

export interface ConfigWriteResult {
  /** False when nothing had to change (unset of an absent key). */
  changed: boolean;
  warnings: string[];
}

type Tree = Record<string, unknown>;

export interface SetOptions {
  /**
   * The value came over a channel no one else sees (the CLI's stdin or `--from-file`), not a
   * command line or a tool call's transcript: only then may `extJudge.apiKey` be written.
   */
  privateInput?: boolean;
}

/**
 * Sets `key` to `value` in the file at `path`. When the key holds a secret and the file is
 * readable by group or others, a warning says so.
 */
export async function setConfigKey(
  path: string,
  key: string,
  value: unknown,
  options: SetOptions = {},
): Promise<ConfigWriteResult> {
  const segs = parseKey(key);
  const guardJudgeKey = options.privateInput !== true;
  if (guardJudgeKey) refuseSecretWrite(path, segs, value);
  const warnings: string[] = [];
  const written = await updateJsonFile<Tree>(
    path,
    (current) => {
      const before = asTree(path, current);
      const next = setAt(before, segs, value);
      if (
        guardJudgeKey &&
        getAt(next, ["extJudge", "apiKey"]) !== undefined &&
        getAt(next, ["extJudge", "apiKey"]) !== getAt(before, ["extJudge", "apiKey"])
      ) {
        refuseSecretWrite(path, ["extJudge", "apiKey"], value);
      }
      const fresh = refusedUnless(key, path, () => {
        validateEntry(path, segs, next);
        return validateConfigTree(path, next).warnings;
      });
      const old = warningsOf(path, before);
      warnings.push(...fresh.filter((w) => !old.includes(w)));
      warnings.push(...modelWarnings(segs, value), ...profileWarnings(next));
      const unknown = unknownKeyWarning(segs);
      if (unknown) warnings.push(unknown);
      return next;
    },
    CONFIG_WRITE,
  );
  // A secret just written to a file others can read: say so now, not at the next `config show`.
  const exposed = holdsSecret(segs) ? await exposedSecrets(path, written) : undefined;
  if (exposed) warnings.push(exposedWarning(path, exposed));
  return { changed: true, warnings };
}

/** Removes `key` from the file at `path`; an absent key (or file) changes nothing. */
export async function unsetConfigKey(path: string, key: string): Promise<ConfigWriteResult> {
  const segs = parseKey(key);
  let changed = false;
  const warnings: string[] = [];
  await updateJsonFile<Tree>(
    path,
    (current) => {
      if (current === undefined) return undefined;
      const { tree, removed } = unsetAt(asTree(path, current), segs);
      if (!removed) return undefined;
      refusedUnless(key, path, () => validateConfigTree(path, tree));
      warnings.push(...profileWarnings(tree));
      changed = true;
      return tree;
    },
    CONFIG_WRITE,
  );
  return { changed, warnings };
}

/** Runs a validation; a `config_invalid` failure becomes a refusal that says the file is unchanged. */
function refusedUnless<T>(key: string, path: string, validate: () => T): T {
  try {
    return validate();
  } catch (err) {
    if (!SvcError.is(err) || err.code !== "config_invalid") throw err;
    throw new SvcError(
      "config_invalid",
      `refused to change ${key}; ${path} is unchanged. ${err.message}`,
      err.details ? { details: err.details } : {},
    );
  }
}

function refuseSecretWrite(path: string, segs: string[], value: unknown): void {
  const targetsKey =
    segs[0] === "extJudge" &&
    (segs.length === 1 ? typeof value === "object" && value !== null && "apiKey" in value : segs[1] === "apiKey");
  if (!targetsKey) return;
  throw new SvcError(
    "forbidden",
    `extJudge.apiKey is not writable through the config_set tool (it would land in a transcript). ` +
      `Pipe it to \`svc config set extJudge.apiKey\` on stdin (or give --from-file <path>), or hand-edit ${path} and keep it private (chmod 600 ${path}), ` +
      `or set EXT_JUDGE_API_KEY in the daemon's environment.`,
  );
}

function asTree(path: string, current: unknown): Tree {
  if (current === undefined) return {};
  if (typeof current !== "object" || current === null || Array.isArray(current)) {
    throw new SvcError("config_invalid", `${path}: the top level must be a JSON object; fix the file by hand first`);
  }
  return current as Tree;
}

/** Entries the loader would silently drop are refused when they are the key being set. */
function validateEntry(path: string, segs: string[], next: Tree): void {
  const check = (
    schema: {
      safeParse(v: unknown): { success: boolean; error?: { issues: Array<{ path: PropertyKey[]; message: string }> } };
    },
    at: string[],
  ) => {
    const r = schema.safeParse(getAt(next, at));
    if (!r.success) {
      const issue = r.error!.issues[0]!;
      const sub = [...at, ...issue.path.map(String)];
      throw new SvcError(
        "config_invalid",
        `${path}: key ${sub.join(".")}: ${foundAllowed(sub, valueAt(next, sub), issue.message)}`,
      );
    }
  };
  if (segs[0] === "acpAgents" && segs.length >= 2) check(acpAgentSchema, segs.slice(0, 2));
  if (segs[0] === "models") {
    const parsed = modelsSchema.safeParse(getAt(next, ["models"]));
    const problem = parsed.success ? modelsProblem(parsed.data) : undefined;
    if (problem) throw new SvcError("config_invalid", `${path}: key models: ${problem}`);
  }
  if (segs[0] === "worktrees" && segs[1] === "provisionConcurrencyByRepo" && segs.length <= 3) {
    check(worktreesSchema.shape.provisionConcurrencyByRepo, ["worktrees", "provisionConcurrencyByRepo"]);
  }
}

function modelWarnings(segs: string[], value: unknown): string[] {
  if (segs[0] !== "models") return [];
  if (segs.length === 2) return unknownModelWarnings(segs[1]!, value);
  if (segs.length === 1 && typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([role, v]) => unknownModelWarnings(role, v));
  }
  return [];
}

function warningsOf(path: string, tree: Tree): string[] {
  try {
    return validateConfigTree(path, tree).warnings;
  } catch {
    return [];
  }
}

function profileWarnings(tree: Tree): string[] {
  const active = tree.activeProfile;
  const profiles = (tree.profiles ?? {}) as Tree;
  return typeof active === "string" && !Object.hasOwn(profiles, active)
    ? [`activeProfile "${active}" names no profile; the top-level configuration applies`]
    : [];
}
