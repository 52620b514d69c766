import { z } from "zod";
import type { ToolCallContext, ToolDef } from "../plugin-api/tools.js";
import type { ConfigService } from "../config/config-service.js";
import { confineToRoots } from "../daemon/confine-paths.js";
import type { SessionMessaging } from "./messaging.js";
import type { SessionResumer } from "./resume.js";
import type { SessionRuntime } from "./runtime.js";
import { startFields, urgency } from "./schemas.js";
import { recap } from "./views.js";

const from = z
  .string()
  .min(1)
  .describe("The calling agent's own session id (its SVC_SESSION_ID); omit when a person is calling");
const sessionId = z.string().min(1).describe("The session (ses_…)");
const text = z.string().min(1).describe("The text to send");
const how = urgency.describe("queue (behind the turn), steer (ahead of queued prompts) or interrupt (cancel the turn)");
const interrupt = z.boolean().describe("Cancel the session's turn (default: defaults.agentPromptInterrupt)");
/** Results are objects; their fields are documented in docs/sessions.md. */
const receipt = {
  promptId: z.string().optional().describe("The prompt's id"),
  delivery: z.string().optional().describe("queued, steered, interrupted or delivered"),
};
const descriptor = z.looseObject({ id: z.string().describe("The session id") }).describe("The session descriptor");

/** The MCP tools of agent sessions, served on /mcp. */
export function sessionTools(
  runtime: SessionRuntime,
  messaging: SessionMessaging,
  config: ConfigService,
  resumer: SessionResumer,
): ToolDef[] {
  const tools = [
    {
      name: "start_agent_session",
      description:
        "Start an agent session (config defaults merged), optionally in a git worktree and with a first prompt. Returns the descriptor (eventsPath, worktree, provisioning); deduped: true when an idempotency key matched a live session.",
      inputSchema: startFields,
      outputSchema: {
        descriptor,
        receipt: z.looseObject({}).optional().describe("The first prompt's receipt, when one was given"),
        deduped: z
          .boolean()
          .optional()
          .describe("true: the spawn's idempotency key named a live session, which is returned instead of a new one"),
      },
      handler: async (i: z.infer<z.ZodObject<typeof startFields>>, ctx: ToolCallContext) => {
        const { parentSessionId, ...rest } = i;
        await confineToRoots(
          ctx.principal,
          config.current().effective.pairing.allowedRoots ?? [],
          { cwd: rest.cwd, worktreeRoot: rest.worktreeRoot },
          ["cwd"],
        );
        const { descriptor, result, deduped } = await runtime.start({
          ...rest,
          parentId: parentSessionId,
          ...(ctx.sessionToken ? { callerToken: ctx.sessionToken } : {}),
        });
        return { descriptor, ...(result ? { receipt: result } : {}), ...(deduped ? { deduped: true } : {}) };
      },
    } satisfies ToolDef<typeof startFields>,
    {
      name: "resume_agent_session",
      description:
        "Resume an ended agent session (also one from before a daemon restart) under its id: its agent is started again and loads its conversation; transcript, lineage and options are kept. Only for agents marked resumable (acpAgents.<slug>.resumable) that support session loading; otherwise fails with not_resumable saying why.",
      inputSchema: { sessionId },
      outputSchema: { descriptor },
      handler: async (i: { sessionId: string }, ctx: ToolCallContext) => ({
        descriptor: await resumer.resume(i.sessionId, (record) =>
          confineToRoots(ctx.principal, config.current().effective.pairing.allowedRoots ?? [], { cwd: record.cwd }, [
            "cwd",
          ]),
        ),
      }),
    },
    {
      name: "session_list",
      description:
        "List sessions with state, activity (running, attention, quiet) and pendingPrompts (stale ones flagged).",
      inputSchema: {},
      outputSchema: { sessions: z.array(descriptor).describe("Every session, oldest first") },
      readOnly: true,
      handler: () => ({ sessions: runtime.list() }),
    } satisfies ToolDef<{}>,
    {
      name: "session_recap",
      description:
        "Recap one session: descriptor, pendingPrompts (stale flagged), last turn result, latest transcript lines.",
      inputSchema: {
        sessionId,
        lines: z
          .number()
          .int()
          .min(0)
          .max(500)
          .optional()
          .describe("How many transcript lines to include (default 20)"),
      },
      outputSchema: { descriptor: descriptor.optional() },
      readOnly: true,
      handler: (i: { sessionId: string; lines?: number }) => recap(runtime, i.sessionId, i.lines ?? 20),
    },
    {
      name: "agent_prompt",
      description:
        "Prompt a session. Without `interrupt` defaults.agentPromptInterrupt decides (queue behind the turn, or cancel it). A session sender's interrupt obeys defaults.messaging.agentInterrupt.",
      inputSchema: { sessionId, text, interrupt: interrupt.optional(), fromSessionId: from.optional() },
      outputSchema: receipt,
      handler: (i: { sessionId: string; text: string; interrupt?: boolean; fromSessionId?: string }) =>
        messaging.prompt(i.sessionId, i.text, { from: i.fromSessionId, interrupt: i.interrupt }),
    },
    {
      name: "message_send",
      description:
        "Send a message to a child or parent session (a sibling only with defaults.messaging.allowSiblings). Urgency interrupt from a session is delivered as steer unless agentInterrupt is allow.",
      inputSchema: {
        toSessionId: z
          .string()
          .min(1)
          .describe("The receiving session (a child or the parent; a sibling with allowSiblings)"),
        text,
        urgency: how.optional(),
        fromSessionId: from.optional(),
      },
      outputSchema: receipt,
      handler: (i: {
        toSessionId: string;
        text: string;
        urgency?: "queue" | "steer" | "interrupt";
        fromSessionId?: string;
      }) => messaging.messageSend(i.fromSessionId, i.toSessionId, i.text, i.urgency),
    },
    {
      name: "message_reply",
      description: "Reply to a message this session received (by its messageId).",
      inputSchema: {
        messageId: z.string().min(1).describe("The id of the message being answered"),
        text,
        urgency: how.optional(),
        fromSessionId: from,
      },
      outputSchema: receipt,
      handler: (i: {
        messageId: string;
        text: string;
        urgency?: "queue" | "steer" | "interrupt";
        fromSessionId: string;
      }) => messaging.messageReply(i.fromSessionId, i.messageId, i.text, i.urgency),
    },
    {
      name: "message_parent",
      description:
        "Message the session that spawned this one. `interrupt` (default defaults.agentPromptInterrupt) only requests an interrupt; defaults.messaging.agentInterrupt decides.",
      inputSchema: { text, interrupt: interrupt.optional(), fromSessionId: from },
      outputSchema: receipt,
      handler: (i: { text: string; interrupt?: boolean; fromSessionId: string }) =>
        messaging.messageParent(i.fromSessionId, i.text, i.interrupt),
    },
  ];
  return tools as unknown as ToolDef[];
}
