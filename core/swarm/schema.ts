/**
 * The swarm file (`svc/swarm/v1`): a list of agent steps, each started as a session in dependency
 * order. JSON; documented in docs/swarm.md, with its JSON Schema generated into
 * manifests/swarm-v1.schema.json (`npm run docs`).
 */
import { z } from "zod";
import { SvcError, issuesToDetails } from "../errors.js";

export const SWARM_SCHEMA_ID = "svc/swarm/v1";

const stepId = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9_-]{0,63}$/,
    "a step id starts with a letter and has only letters, digits, `_` and `-` (at most 64)",
  )
  .describe("The step's id, unique in the file; other steps name it in `needs` and in `${{ steps.<id>.output }}`");
const optionValue = z.union([z.boolean(), z.number(), z.string()]);

export const swarmStepSchema = z.strictObject({
  id: stepId,
  label: z.string().min(1).optional().describe("Human-readable label shown in listings; default the id"),
  prompt: z
    .string()
    .min(1)
    .describe("The step's prompt; `${{ steps.<id>.output }}` is replaced by the final output of a step it needs"),
  model: z
    .string()
    .min(1)
    .describe(
      "A model id (e.g. `claude-sonnet-4-5`) or `role:<name>`, a model role resolved through --model, the repository's models file, config `models`, the built-in default",
    ),
  adapter: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Adapter slug; when omitted it is chosen from the model (acpAgents.<slug>.models, then the model catalog)",
    ),
  cwd: z
    .string()
    .min(1)
    .optional()
    .describe("Working directory; relative to the swarm file's directory; default that directory"),
  worktree: z
    .union([z.string().min(1), z.literal(true)])
    .optional()
    .describe(
      "Run the step in a git worktree: `true` (a fresh one) or a slug; passed to the spawn as `sessions start` takes it",
    ),
  options: z
    .record(z.string(), optionValue)
    .optional()
    .describe("Spawn options over defaults.options and defaults.adapters.<slug>.options"),
  skills: z
    .array(z.string().min(1))
    .optional()
    .describe("Skills; replaces the defaults' skills as `sessions start --skill` does"),
  needs: z.array(stepId).optional().describe("Ids of steps that must succeed before this one starts"),
  timeoutMinutes: z
    .number()
    .positive()
    .max(1440)
    .optional()
    .describe(
      "Stop the step's session and fail the step when its turn has not ended after this many minutes (default: no limit)",
    ),
});

export const swarmFileSchema = z.strictObject({
  $schema: z.string().optional().describe("Path or URL of this JSON Schema, for editors"),
  schema: z.literal(SWARM_SCHEMA_ID).describe(`The file format: "${SWARM_SCHEMA_ID}"`),
  name: z.string().min(1).optional().describe("The swarm's name, shown in run listings; default the file name"),
  concurrency: z
    .number()
    .int()
    .min(1)
    .max(64)
    .optional()
    .describe("Default for --concurrency: at most this many steps at once (default 4)"),
  steps: z.array(swarmStepSchema).min(1).max(1000).describe("The steps, in the order they are shown"),
});

export type SwarmStep = z.infer<typeof swarmStepSchema>;
export type SwarmFile = z.infer<typeof swarmFileSchema>;

/** The JSON Schema of the swarm file (input side, as the config's is). */
export function swarmJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(swarmFileSchema, { io: "input" }) as Record<string, unknown>;
  return { $id: "https://svc.dev/schemas/swarm-v1.schema.json", title: "svc swarm file (svc/swarm/v1)", ...schema };
}

/**
 * Parses a swarm file's JSON value. Errors name the step (by id when it has one) and the field,
 * with zod's issues as `details`.
 */
export function parseSwarmFile(value: unknown, where = "swarm file"): SwarmFile {
  const r = swarmFileSchema.safeParse(value);
  if (r.success) return r.data;
  const steps = (value as { steps?: Array<{ id?: unknown }> } | undefined)?.steps;
  const named = r.error.issues.map((i) => ({ ...i, path: namePath(i.path, steps) }));
  const first = named[0]!;
  throw new SvcError("invalid_input", `${where}: ${first.path.join(".") || "(top level)"}: ${first.message}`, {
    details: issuesToDetails(named),
  });
}

/** `steps.1.model` becomes `steps[review].model` when step 1 has an id. */
function namePath(path: PropertyKey[], steps: Array<{ id?: unknown }> | undefined): string[] {
  const out = path.map(String);
  if (out[0] === "steps" && out.length > 1 && Array.isArray(steps)) {
    const id = steps[Number(out[1])]?.id;
    if (typeof id === "string" && id !== "") return [`steps[${id}]`, ...out.slice(2)];
    return [`steps[${out[1]}]`, ...out.slice(2)];
  }
  return out;
}

/** Parses the text of a swarm file (JSON). */
export function parseSwarmText(text: string, where: string): SwarmFile {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new SvcError("invalid_input", `${where} is not valid JSON: ${(err as Error).message}`);
  }
  return parseSwarmFile(value, where);
}
