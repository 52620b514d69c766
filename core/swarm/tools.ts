/** The swarm MCP tools, served on /mcp; the same operations and rules as the `/swarm/runs` routes. */
import { z } from "zod";
import { authorize } from "../daemon/authorization.js";
import type { ToolDef } from "../plugin-api/tools.js";
import { runInputFields } from "./run-input.js";
import type { SwarmService } from "./service.js";

const runId = z.string().min(1).describe("The run (run_…)");
const runShape = {
  ...runInputFields,
  wait: z.boolean().optional().describe("Wait for the run to end and return its final record"),
};
const record = z
  .looseObject({
    runId: z.string().describe("The run id"),
    state: z.string().describe("running, succeeded, failed, cancelled or interrupted"),
  })
  .describe("The run record (docs/swarm.md)");

export function swarmTools(service: () => Promise<SwarmService>): ToolDef[] {
  return [
    {
      name: "swarm_run",
      description:
        "Run a swarm file's steps (svc/swarm/v1) as agent sessions in dependency order; dryRun returns the resolved plan (models with sources, adapters) and starts nothing.",
      inputSchema: runShape,
      outputSchema: {
        plan: z.looseObject({}).describe("The resolved plan"),
        run: record.optional(),
        parentSessionId: z
          .string()
          .optional()
          .describe("The session the steps nest under (the calling session, per spawn.attach)"),
      },
      handler: async (input: z.infer<z.ZodObject<typeof runShape>>, ctx) => {
        authorize("swarm.run", ctx.principal);
        const { wait, ...rest } = input;
        const out = await (await service()).start(rest, {
          principal: ctx.principal,
          ...(ctx.sessionToken ? { callerToken: ctx.sessionToken } : {}),
        });
        if (wait && out.run) return { ...out, run: await (await service()).wait(out.run.runId) };
        return out;
      },
    } satisfies ToolDef<typeof runShape>,
    {
      name: "swarm_runs",
      description:
        "List swarm runs (newest first) with step counts, or with runId show one run: its plan and each step's state, session, timing and output.",
      inputSchema: { runId: runId.optional() },
      outputSchema: { runs: z.array(z.looseObject({})).optional().describe("Run summaries"), run: record.optional() },
      readOnly: true,
      handler: async (input: { runId?: string }) =>
        input.runId ? { run: await (await service()).get(input.runId) } : { runs: await (await service()).list() },
    } satisfies ToolDef<{ runId: z.ZodOptional<z.ZodString> }>,
    {
      name: "swarm_cancel",
      description:
        "Cancel a running swarm run: stops its sessions and cancels the steps not started; returns the final record.",
      inputSchema: { runId },
      outputSchema: { run: record },
      handler: async (input: { runId: string }, ctx) => {
        authorize("swarm.run", ctx.principal);
        return { run: await (await service()).cancel(input.runId) };
      },
    } satisfies ToolDef<{ runId: z.ZodString }>,
  ];
}
