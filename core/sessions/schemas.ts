import { z } from "zod";

const optionValue = z.union([z.boolean(), z.number(), z.string()]);

/** Inputs of the session routes and tools (the tools reuse the field shapes). */
export const startFields = {
  adapter: z
    .string()
    .min(1)
    .describe("Adapter slug: an @svc/adapter-<slug> package, an acpAgents key or a catalog agent"),
  cwd: z.string().min(1).optional().describe("Absolute working directory; default the daemon's cwd"),
  prompt: z.string().min(1).optional().describe("First prompt"),
  label: z.string().min(1).optional().describe("Human-readable label shown in listings"),
  name: z.string().min(1).optional().describe("Stable session name for the registry"),
  options: z
    .record(z.string(), optionValue)
    .optional()
    .describe("Spawn options over defaults.options and defaults.adapters.<slug>.options"),
  skills: z.array(z.string().min(1)).optional().describe("Replaces the defaults' skills"),
  parentSessionId: z.string().min(1).optional().describe("The spawning session (lineage for message_parent)"),
  worktree: z
    .union([z.string().min(1), z.literal(true)])
    .optional()
    .describe("Run in a git worktree: a slug, or true for an automatic one (worktrees.isolation decides when absent)"),
  worktreeRoot: z.string().min(1).optional().describe("Directory to create the worktree under, over worktrees.root"),
  attach: z
    .boolean()
    .optional()
    .describe("false: do not nest under the calling session; true: nest even when spawn.attach is on-request"),
  dedupe: z.boolean().optional().describe("false: derive no idempotency key for this spawn"),
  idempotencyKey: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("A second spawn with the same key returns the live session holding it"),
  extTracing: z
    .boolean()
    .optional()
    .describe("Trace this session to the OTLP endpoint (docs/tracing.md), over defaults.extTracing"),
  delegation: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      "How many further levels of sessions the new session may spawn (bounded by the parent and the calling session, and by defaults.maxGrantableDelegation, for a spawn a session makes)",
    ),
};

export const startBody = z.object({ ...startFields, wait: z.boolean().optional() }).strict();

export const terminalBody = z
  .object({
    preset: z.string().min(1).optional(),
    argv: z.array(z.string()).optional(),
    cwd: z.string().min(1).optional(),
    label: z.string().min(1).optional(),
    name: z.string().min(1).optional(),
    worktreeRoot: z
      .string()
      .min(1)
      .optional()
      .describe("Directory a worktree for it is created under (worktrees.isolation always), over worktrees.root"),
  })
  .strict();

export const urgency = z.enum(["queue", "steer", "interrupt"]);

export const promptBody = z
  .object({
    text: z.string().min(1),
    interrupt: z.boolean().optional(),
    wait: z.boolean().optional(),
  })
  .strict();
