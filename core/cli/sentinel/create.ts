/**
 * `svc sentinel create --target <kind> [--target-json <json|@file|->] --subject <s>…`: a sentinel
 * with any target kind, plugin targets included, through `POST /sentinels` (the CLI sends the
 * per-boot token, so nobody copies it out of runtime.json). The target object is `{kind, …json}`;
 * the daemon's target plugin validates it.
 */
import { readJsonFlag } from "../json-input.js";
import { printJson, println, usageError } from "../output.js";
import { matchClauses, parseUntil, postSentinel } from "./watch.js";

export interface CreateOptions {
  target: string;
  targetJson?: string;
  subject?: string[];
  types?: string;
  until?: string;
  provider?: string;
  label?: string;
  group?: string;
  idempotencyKey?: string;
  json?: boolean;
}

export const CREATE_EXAMPLE = `svc sentinel create --target my-target --target-json '{"channel":"ops"}' --subject 'ci:api*'`;

/** The `target` object: `--target-json`'s object with `kind` from `--target` (a differing `kind` in the JSON is refused). */
export async function targetObject(kind: string, json: string | undefined): Promise<Record<string, unknown>> {
  if (!/^[a-z][a-z0-9-]*$/.test(kind))
    throw usageError(
      `--target must be a target kind such as session, webhook or a plugin's kind, got ${JSON.stringify(kind)}`,
    );
  const given = json === undefined ? {} : await readJsonFlag("--target-json", json);
  if (given === null || typeof given !== "object" || Array.isArray(given))
    throw usageError(`--target-json must be a JSON object (the target's fields besides kind), e.g. ${CREATE_EXAMPLE}`);
  const rest = given as Record<string, unknown>;
  if (rest.kind !== undefined && rest.kind !== kind)
    throw usageError(`--target-json has kind ${JSON.stringify(rest.kind)} but --target is ${kind}; give the kind once`);
  return { ...rest, kind };
}

export async function buildCreateSpec(opts: CreateOptions): Promise<Record<string, unknown>> {
  if (!opts.subject?.length) throw usageError(`give at least one --subject to match, e.g. ${CREATE_EXAMPLE}`);
  return {
    match: matchClauses(opts.subject, opts.types),
    until: parseUntil(opts.until ?? "never"),
    target: await targetObject(opts.target, opts.targetJson),
    ...(opts.provider ? { provider: opts.provider } : {}),
    ...(opts.label ? { label: opts.label } : {}),
    ...(opts.group ? { group: opts.group } : {}),
  };
}

export async function create(opts: CreateOptions): Promise<void> {
  const created = await postSentinel(await buildCreateSpec(opts), opts.idempotencyKey);
  if (opts.json) return printJson(created);
  println(
    `${created.id} delivering ${created.spec.match.map((m) => m.subject).join(", ")} (provider ${created.spec.provider}) → target ${opts.target}`,
  );
}
