/**
 * The resolved plan of a run: for each step its model (with source and `role:` chain), its adapter
 * (who chose it, where it comes from in this run), cwd or worktree, and whatever keeps it from
 * starting. `--dry-run` prints it; the scheduler runs it.
 */
import { isAbsolute, resolve as resolvePath } from "node:path";
import type { AcpRecipe } from "../config/acp-catalog.js";
import type { ModelRoleValue } from "../config/schema.js";
import { SvcError } from "../errors.js";
import type { SpawnOptionValue } from "../plugin-api/sessions.js";
import type { LoadFailure } from "../plugin-host/registry.js";
import { chooseAdapter } from "./adapter-choice.js";
import { adapterAvailability, type AdapterWalk } from "./adapter-walk.js";
import { checkGraph } from "./graph.js";
import type { SwarmFile } from "./schema.js";
import { resolveStepModel, type StepModel } from "./step-model.js";

export const DEFAULT_CONCURRENCY = 4;

export interface PlannedStep {
  id: string;
  label: string;
  prompt: string;
  needs: string[];
  model: StepModel | { ref: string };
  adapter: {
    slug?: string;
    chosenBy?: "step" | "acpAgents" | "catalog";
    why?: string;
    /** Where the slug resolves in this run: an adapter package, config acpAgents, or the ACP catalog. */
    source?: "package" | "config" | "catalog";
    package?: string;
    bin?: string;
  };
  cwd: string;
  worktree?: string | true;
  options: Record<string, SpawnOptionValue>;
  skills?: string[];
  /** The step's `timeoutMinutes`, in ms. */
  timeoutMs?: number;
  /** Why the step cannot start; it fails at once and its dependents are skipped. */
  problem?: string;
}

export interface RunPlan {
  name: string;
  /** The swarm file's path, when it came from a file. */
  file?: string;
  baseDir: string;
  concurrency: number;
  /** A start order (dependencies first). */
  order: string[];
  steps: PlannedStep[];
  /** The run's `--model` layer and the repository's models file, as used. */
  models: { run: Record<string, string>; repository?: { path: string; models: Record<string, ModelRoleValue> } };
  /** The run's adapter load report (built-ins and config.adapters walked afresh). */
  loadReport: LoadFailure[];
}

export interface PlanInput {
  swarm: SwarmFile;
  file?: string;
  baseDir: string;
  concurrency?: number;
  runModels: Record<string, string>;
  repository?: { path: string; models: Record<string, ModelRoleValue> };
  config: { models?: Record<string, ModelRoleValue>; acpAgents?: Record<string, AcpRecipe> };
  walk: AdapterWalk;
}

export function resolvePlan(input: PlanInput): RunPlan {
  if (!isAbsolute(input.baseDir))
    throw new SvcError("invalid_input", `baseDir must be an absolute path, got ${JSON.stringify(input.baseDir)}`);
  const order = checkGraph(input.swarm.steps);
  const acpAgents = input.config.acpAgents ?? {};
  const layers = { run: input.runModels, ...(input.repository ? { repository: input.repository.models } : {}) };
  const steps = input.swarm.steps.map((s): PlannedStep => {
    const problems: string[] = [];
    let model: PlannedStep["model"] = { ref: s.model };
    try {
      model = resolveStepModel(s.model, input.config, layers);
    } catch (err) {
      problems.push(`steps[${s.id}].model ${s.model}: ${(err as Error).message}`);
    }
    const id = "id" in model ? model.id : undefined;
    const choice = chooseAdapter(s.adapter, id, acpAgents, s.id);
    const adapter: PlannedStep["adapter"] = {
      ...(choice.slug ? { slug: choice.slug, chosenBy: choice.chosenBy, why: choice.why } : {}),
    };
    if (choice.problem) problems.push(choice.problem);
    if (choice.slug) {
      const a = adapterAvailability(input.walk, choice.slug, acpAgents);
      if ("problem" in a) problems.push(a.problem);
      else Object.assign(adapter, a);
    }
    return {
      id: s.id,
      label: s.label ?? s.id,
      prompt: s.prompt,
      needs: s.needs ?? [],
      model,
      adapter,
      cwd: resolvePath(input.baseDir, s.cwd ?? "."),
      ...(s.worktree !== undefined ? { worktree: s.worktree } : {}),
      // The resolved model rides in the spawn options as `model` (what ACP agents read from _meta.svc.options).
      options: { ...(s.options ?? {}), ...(id ? { model: id } : {}) },
      ...(s.skills ? { skills: s.skills } : {}),
      ...(s.timeoutMinutes !== undefined ? { timeoutMs: Math.round(s.timeoutMinutes * 60_000) } : {}),
      ...(problems.length ? { problem: problems.join("; ") } : {}),
    };
  });
  return {
    name:
      input.swarm.name ??
      (input.file ? input.file.replace(/^.*[\\/]/, "").replace(/\.swarm\.json$|\.json$/, "") : "swarm"),
    ...(input.file ? { file: input.file } : {}),
    baseDir: input.baseDir,
    concurrency: input.concurrency ?? input.swarm.concurrency ?? DEFAULT_CONCURRENCY,
    order,
    steps,
    models: { run: input.runModels, ...(input.repository ? { repository: input.repository } : {}) },
    loadReport: input.walk.failures,
  };
}
