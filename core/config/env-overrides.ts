/**
 * The environment variables SPEC.md names as overrides, one row per config key. The resolver
 * applies them above the file (below verb flags), except `EXT_JUDGE_API_KEY`, which is read only
 * when the file has no `extJudge.apiKey`. A value that does not parse is an error naming the
 * variable, never a silent fallback.
 */
import type { z } from "zod";
import { SvcError } from "../errors.js";
import { keyTraits } from "./key-traits.js";

export interface EnvOverride {
  /** The variable's name. */
  name: string;
  /** The dotted config key it overrides. */
  key: string;
  kind: "number" | "boolean" | "string";
  schema: z.ZodType;
  /** True when the variable is read only after the file (the file wins). */
  afterFile?: boolean;
  /** True when the key is a secret (secrets.ts): a bad value is not quoted. */
  secret: boolean;
}

/** A row, with the schema of its key and whether it is a secret. */
const row = (o: Omit<EnvOverride, "schema" | "secret">): EnvOverride => ({ ...o, ...keyTraits(o.key) });

export const ENV_OVERRIDES: readonly EnvOverride[] = [
  row({ name: "SVC_TURN_STALL_AFTER_MS", key: "daemon.turnStallAfterMs", kind: "number" }),
  row({ name: "SVC_WORKTREES_ROOT", key: "worktrees.root", kind: "string" }),
  row({ name: "SVC_WORKTREES_ISOLATION", key: "worktrees.isolation", kind: "string" }),
  row({ name: "SVC_WORKTREES_PROVISION_CONCURRENCY", key: "worktrees.provisionConcurrency", kind: "number" }),
  row({ name: "SVC_SPAWN_ATTACH", key: "spawn.attach", kind: "string" }),
  row({ name: "SVC_SPAWN_DEDUPE", key: "spawn.dedupe", kind: "string" }),
  row({ name: "SVC_PROVENANCE_WRAP_GH", key: "provenance.wrapGh", kind: "boolean" }),
  row({ name: "SVC_SESSIONS_ATTENTION_DELAY_SEC", key: "sessions.attentionDelaySec", kind: "number" }),
  row({ name: "SVC_STORE_URL", key: "store.url", kind: "string" }),
  row({ name: "SVC_STORE_KEY_FILE", key: "store.keyFile", kind: "string" }),
  row({ name: "EXT_JUDGE_API_KEY", key: "extJudge.apiKey", kind: "string", afterFile: true }),
];

/** `SVC_HOME` moves config.json and every home-relative default (worktrees, sessions). */
export const HOME_ENV = "SVC_HOME";

/** Parses one variable's value; `undefined` when unset or empty. Throws `config_invalid` naming the variable. */
export function readEnvOverride(o: EnvOverride, env: NodeJS.ProcessEnv): unknown {
  const text = env[o.name];
  if (text === undefined || text === "") return undefined;
  const shown = o.secret ? "(value hidden)" : JSON.stringify(text);
  const fail = (allowed: string): never => {
    throw new SvcError(
      "config_invalid",
      `environment variable ${o.name}=${shown} is invalid: ${allowed} (it overrides ${o.key})`,
    );
  };
  let value: unknown = text;
  if (o.kind === "number") {
    value = Number(text.trim());
    if (text.trim() === "" || !Number.isFinite(value)) fail("expected a number");
  } else if (o.kind === "boolean") {
    const t = text.trim().toLowerCase();
    if (["true", "1", "yes", "on"].includes(t)) value = true;
    else if (["false", "0", "no", "off"].includes(t)) value = false;
    else fail("expected true or false (also 1/0, yes/no, on/off)");
  }
  const parsed = o.schema.safeParse(value);
  if (!parsed.success) fail(parsed.error.issues.map((i) => i.message).join("; "));
  return value;
}
