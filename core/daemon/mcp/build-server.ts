/**
 * One MCP server over the daemon's TOOLS table. The /mcp route builds one per request
 * (stateless Streamable HTTP), so each call sees the tools registered at that moment and runs
 * with the caller's principal.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import type { ToolCallContext, ToolDef } from "../../plugin-api/tools.js";
import { SVC_VERSION } from "../../version.js";
import { toolFailure, toolSuccess } from "./tool-result.js";
import { requireReach, requireToken, toolNeed } from "../authorization.js";
import type { McpCallTrace } from "./call-trace.js";

/** `onInternal` hears of anything a tool threw that is not an SvcError (the caller sees a generic `internal`). */
export function buildMcpServer(tools: ReadonlyArray<ToolDef>, ctx: ToolCallContext, onInternal?: (tool: string, err: unknown) => void, trace?: McpCallTrace): McpServer {
  const server = new McpServer({ name: "svc", version: SVC_VERSION }, { capabilities: { tools: {} } });
  for (const tool of tools) {
    server.registerTool(
      tool.name,
      {
        ...(tool.title ? { title: tool.title } : {}),
        description: tool.description,
        // Strict: an argument the tool does not name is refused (as REST refuses unknown fields)
        // instead of silently dropped.
        inputSchema: z.strictObject(tool.inputSchema),
        // Loose: a result may carry more fields than the schema names (new ones are only added).
        ...(tool.outputSchema ? { outputSchema: z.looseObject(tool.outputSchema) } : {}),
        annotations: { readOnlyHint: tool.readOnly === true, ...(tool.title ? { title: tool.title } : {}) },
      },
      async (input: Record<string, unknown>, extra: { _meta?: Record<string, unknown>; requestId?: string | number }) => {
        const call = async () => {
          try {
            if (tool.requires === "token") requireToken(tool.name, ctx.principal);
            else requireReach(tool.name, toolNeed(tool.name, tool.readOnly === true), ctx.principal);
            return toolSuccess(await tool.handler(input as never, ctx));
          } catch (err) {
            return toolFailure(err, onInternal && ((e) => onInternal(tool.name, e)));
          }
        };
        if (!trace || extra._meta?.traceparent === undefined) return call();
        return trace.around({ tool: tool.name, meta: extra._meta, args: input, requestId: extra.requestId, ...(ctx.sessionToken ? { sessionToken: ctx.sessionToken } : {}) }, call);
      },
    );
  }
  return server;
}
