/**
 * The repository's own `models` setting: `.svc/models.json` at the root of the git repository that
 * holds the swarm file (or in a directory between the file and that root; the nearest wins), as
 * `{"models": {<role>: <model id or {model, route?, profile?}>}}`, validated with the config
 * schema's `models` section. Outside a git repository only the swarm file's own directory is looked at.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { z } from "zod";
import { SvcError, issuesToDetails } from "../errors.js";
import { modelsSchema, type ModelRoleValue } from "../config/schema.js";

export const REPOSITORY_MODELS_FILE = join(".svc", "models.json");

const fileSchema = z.looseObject({ models: modelsSchema.optional() });

export interface RepositoryModels {
  path: string;
  models: Record<string, ModelRoleValue>;
}

/** The models file that applies to a swarm file in `dir`, if any. */
export function findRepositoryModels(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const candidate = join(d, REPOSITORY_MODELS_FILE);
    if (existsSync(candidate)) return candidate;
    if (existsSync(join(d, ".git")) || dirname(d) === d) return undefined;
  }
}

/** Reads and validates the repository's models file for a swarm file in `dir`. */
export async function loadRepositoryModels(dir: string): Promise<RepositoryModels | undefined> {
  const path = findRepositoryModels(dir);
  if (!path) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(await readFile(path, "utf8"));
  } catch (err) {
    throw new SvcError("config_invalid", `${path} is not valid JSON: ${(err as Error).message}`);
  }
  const r = fileSchema.safeParse(value);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new SvcError("config_invalid", `${path}: ${i.path.map(String).join(".") || "(top level)"}: ${i.message}`, {
      details: issuesToDetails(r.error.issues),
    });
  }
  return { path, models: r.data.models ?? {} };
}
