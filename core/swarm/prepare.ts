/**
 * From a swarm file to its resolved plan: parse, walk config.adapters afresh, read the
 * repository's models file, resolve every step. The daemon does this at the start of every run;
 * `svc run-swarm --dry-run` does the same in the CLI when no daemon is running.
 */
import { z } from "zod";
import type { AcpRecipe } from "../config/acp-catalog.js";
import type { ModelRoleValue } from "../config/schema.js";
import type { Logger } from "../runtime/logger.js";
import { walkAdapters, type AdapterWalk } from "./adapter-walk.js";
import { resolvePlan, type RunPlan } from "./plan.js";
import { loadRepositoryModels } from "./repository-models.js";
import { parseSwarmFile, type SwarmFile } from "./schema.js";

/** What a run is asked with, on every surface (the route's body, the tool's input). */
export const runInputFields = {
  swarm: z.looseObject({}).describe("The swarm file's content (svc/swarm/v1)"),
  text: z
    .string()
    .optional()
    .describe("The swarm file's text as given, recorded as runs/<runId>/swarm.json (default: swarm, serialized)"),
  file: z.string().min(1).optional().describe("The swarm file's absolute path (recorded; names the run)"),
  baseDir: z
    .string()
    .min(1)
    .describe(
      "Absolute directory that relative step cwds resolve against and where the repository's .svc/models.json is looked for (the swarm file's directory)",
    ),
  models: z
    .record(z.string().min(1), z.string().min(1))
    .optional()
    .describe("The run's model roles, <role> to model id (highest precedence)"),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .describe("At most this many steps at once (default the file's concurrency, else 4)"),
  worktreeRoot: z
    .string()
    .min(1)
    .optional()
    .describe("Absolute directory the steps' new worktrees are created under, over worktrees.root (the CLI's --root)"),
  dryRun: z.boolean().optional().describe("Resolve and return the plan; start nothing"),
  attach: z
    .boolean()
    .optional()
    .describe(
      "false: do not nest the steps under the calling session; true: nest them even when spawn.attach is on-request",
    ),
  parentSessionId: z
    .string()
    .min(1)
    .optional()
    .describe("The session to nest every step under (default: the calling session, per spawn.attach)"),
};
export const runInputSchema = z.object(runInputFields).strict();
export type RunInput = z.infer<typeof runInputSchema>;

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
