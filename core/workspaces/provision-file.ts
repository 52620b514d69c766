/**
 * What a worktree needs before its agent starts, declared by the repository in
 * `.svc/worktree.json` (read from the checkout the spawn came from):
 *
 * ```json
 * { "install": "npm ci", "copy": [".env*", "config/*.local.json"], "setup": ["make generate"], "timeoutSec": 1800 }
 * ```
 *
 * `install` absent: detected from the lockfile in the new tree ({@link detectInstall});
 * `install: false`: none. Unknown keys are refused (a typo must not silently skip a phase).
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { SvcError, issuesToDetails } from "../errors.js";
import { readTextFile } from "../storage/json-file.js";

export const PROVISION_FILE = ".svc/worktree.json";

export const provisionFileSchema = z.strictObject({
  install: z
    .union([z.string().min(1), z.literal(false)])
    .optional()
    .describe("Dependency command run in the new tree; false = none; absent = detected from the lockfile"),
  copy: z
    .array(z.string().min(1))
    .optional()
    .describe("Globs of files copied from the source checkout (git does not carry them), e.g. .env*"),
  setup: z
    .array(z.string().min(1))
    .optional()
    .describe("Setup hooks: shell commands run in the new tree, in order, after install"),
  timeoutSec: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .optional()
    .describe("Time limit of each command in seconds; default 1800"),
});

export type ProvisionFile = z.infer<typeof provisionFileSchema>;

/** Lockfile → dependency command, first match wins. */
export const LOCKFILES: ReadonlyArray<readonly [string, string]> = [
  ["pnpm-lock.yaml", "pnpm install --frozen-lockfile"],
  ["yarn.lock", "yarn install --frozen-lockfile"],
  ["bun.lock", "bun install --frozen-lockfile"],
  ["bun.lockb", "bun install --frozen-lockfile"],
  ["package-lock.json", "npm ci"],
  ["npm-shrinkwrap.json", "npm ci"],
  ["uv.lock", "uv sync --frozen"],
  ["poetry.lock", "poetry install --no-interaction"],
  ["Gemfile.lock", "bundle install"],
];

export interface ProvisionPlan {
  install?: string;
  copy: string[];
  setup: string[];
  timeoutMs: number;
  /** Where the plan came from, for messages. */
  source: string;
}

/** Reads and validates the file of the checkout at `top`; `undefined` when it has none. */
export async function readProvisionFile(top: string): Promise<ProvisionFile | undefined> {
  const path = join(top, PROVISION_FILE);
  const text = await readTextFile(path);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SvcError("invalid_input", `${path} is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = provisionFileSchema.safeParse(raw);
  if (!parsed.success) {
    const details = issuesToDetails(parsed.error.issues);
    throw new SvcError(
      "invalid_input",
      `${path}: ${details.map((d) => `${d.path}: ${d.message}`).join("; ")} (allowed keys: install, copy, setup, timeoutSec)`,
      { details },
    );
  }
  return parsed.data;
}

export async function detectInstall(tree: string): Promise<string | undefined> {
  for (const [file, command] of LOCKFILES) if (await stat(join(tree, file)).catch(() => undefined)) return command;
  return undefined;
}

/** The heavy phases for a new tree; undefined when there are none (nothing to queue). */
export async function provisionPlan(sourceTop: string, tree: string): Promise<ProvisionPlan | undefined> {
  const file = await readProvisionFile(sourceTop);
  const install = file?.install === false ? undefined : (file?.install ?? (await detectInstall(tree)));
  const plan = {
    ...(install ? { install } : {}),
    copy: file?.copy ?? [],
    setup: file?.setup ?? [],
    timeoutMs: (file?.timeoutSec ?? 1800) * 1000,
    source: file ? join(sourceTop, PROVISION_FILE) : "lockfile detection",
  };
  return plan.install || plan.copy.length || plan.setup.length ? plan : undefined;
}
