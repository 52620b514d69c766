/**
 * What a run is asked with, on every surface (the route's body, the tool's input). Apart from
 * prepare.ts so that the routes and tools register without loading the planner.
 */
import { z } from "zod";

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
