/**
 * A judgement on request: `POST /sessions/:id/judge` and the MCP tool `session_judge` (operation
 * `session.judge`, operate level, as prompting a session is). Both wait for the verdict.
 */
import { z } from "zod";
import type { RouteDef } from "../plugin-api/http.js";
import type { ToolDef } from "../plugin-api/tools.js";
import type { SessionDescriptor, SessionVerdict } from "../sessions/types.js";

export type Judge = (sessionId: string) => Promise<{ verdict: SessionVerdict; descriptor: SessionDescriptor }>;

const verdictShape = z
  .looseObject({
    verdict: z.string().describe("on_track, stuck, needs_human, done, or judge_error"),
    reason: z.string().describe("Why, in a sentence or two (for judge_error: what went wrong)"),
    suggestedPrompt: z.string().optional().describe("A next prompt the judge suggests (never sent by svc)"),
    trigger: z.string().describe("What asked for the verdict: request here"),
    at: z.number().describe("Epoch ms of the verdict"),
    model: z.string().describe("The judge model asked"),
  })
  .describe("The verdict, also kept on the session's descriptor");

export function stewardRoutes(judge: Judge): RouteDef[] {
  return [
    {
      method: "POST",
      path: "/sessions/:id/judge",
      auth: "loopback-or-token",
      handler: async (req) => ({ status: 200, body: await judge(req.params.id!) }),
    },
  ];
}

export function stewardTools(judge: Judge): ToolDef[] {
  const tool: ToolDef<{ sessionId: z.ZodString }> = {
    name: "session_judge",
    description:
      "Ask the session steward's judge now how a session is doing: on_track, stuck, needs_human or done, with a reason and maybe a suggested next prompt (judge_error when the judge gave no usable answer). The verdict is kept on the session; nothing is sent to it. Needs a judge key (extJudge.apiKey or EXT_JUDGE_API_KEY); one judgement per session at a time.",
    inputSchema: { sessionId: z.string().min(1).describe("The session (ses_…)") },
    outputSchema: {
      verdict: verdictShape,
      descriptor: z
        .looseObject({ id: z.string().describe("The session id") })
        .describe("The session descriptor, verdict included"),
    },
    handler: (i) => judge(i.sessionId),
  };
  return [tool as unknown as ToolDef];
}
