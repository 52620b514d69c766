/**
 * From a swarm file to its resolved plan: parse, walk config.adapters afresh, read the
 * repository's models file, resolve every step. The daemon does this at the start of every run;
 * `svc run-swarm --dry-run` does the same in the CLI when no daemon is running.
 */
import type { AcpRecipe } from "../config/acp-catalog.js";
import type { ModelRoleValue } from "../config/schema.js";
import type { Logger } from "../runtime/logger.js";
import { walkAdapters, type AdapterWalk } from "./adapter-walk.js";
import { resolvePlan, type RunPlan } from "./plan.js";
import { loadRepositoryModels } from "./repository-models.js";
import { parseSwarmFile, type SwarmFile } from "./schema.js";
import type { RunInput } from "./run-input.js";

export interface PrepareDeps {
  config: { adapters?: string[]; models?: Record<string, ModelRoleValue>; acpAgents?: Record<string, AcpRecipe> };
  env: NodeJS.ProcessEnv;
  /** The cwd adapter packages resolve from after the install location (the daemon's). */
  cwd: string;
  logger?: Logger;
}

export async function preparePlan(
  input: RunInput,
  deps: PrepareDeps,
): Promise<{ swarm: SwarmFile; plan: RunPlan; walk: AdapterWalk }> {
  const swarm = parseSwarmFile(input.swarm, input.file ?? "swarm file");
  const walk = await walkAdapters(deps.config.adapters ?? [], deps.env, deps.cwd, deps.logger);
  const repository = await loadRepositoryModels(input.baseDir);
  const plan = resolvePlan({
    swarm,
    ...(input.file ? { file: input.file } : {}),
    baseDir: input.baseDir,
    ...(input.concurrency ? { concurrency: input.concurrency } : {}),
    runModels: input.models ?? {},
    ...(repository ? { repository } : {}),
    config: deps.config,
    walk,
  });
  return { swarm, plan, walk };
}
