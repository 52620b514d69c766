/**
 * One MCP server over the daemon's TOOLS table and the registered MCP extensions. The /mcp route
 * builds one per request (stateless), so each call sees the tools registered at that moment and
 * runs with the caller's principal; the same server definition serves both protocol eras.
 */
import { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import type { ToolDef } from "../../plugin-api/tools.js";
import { SVC_VERSION } from "../../version.js";
import { toolFailure, toolSuccess } from "./tool-result.js";
import { requireReach, requireToken, toolNeed } from "../authorization.js";
import type { McpCallTrace } from "./call-trace.js";
import type { McpCallerContext, McpExtension } from "./extensions.js";
import { attachExtensions } from "./attach-extensions.js";
import { SVC_MCP_INSTRUCTIONS } from "./instructions.js";

export interface McpServerParts {
  tools: ReadonlyArray<ToolDef>;
  extensions?: readonly McpExtension[];
  caller: McpCallerContext;
  /** Hears of anything a tool or extension method threw that is not an SvcError (the caller sees a generic `internal`). */
  onInternal?: (call: { tool: string } | { method: string }, err: unknown) => void;
  trace?: McpCallTrace;
}

export function buildMcpServer({ tools, extensions = [], caller, onInternal, trace }: McpServerParts): McpServer {
  // `listChanged: false`: tools registered later are seen by the next request (each builds its
  // server anew), but no `notifications/tools/list_changed` is ever sent.
  const server = new McpServer(
    { name: "svc", version: SVC_VERSION },
    { capabilities: { tools: { listChanged: false } }, instructions: SVC_MCP_INSTRUCTIONS },
  );
  const ctx = { principal: caller.principal, ...(caller.sessionToken ? { sessionToken: caller.sessionToken } : {}) };
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
      async (
        input: Record<string, unknown>,
        extra: { mcpReq: { id: string | number; _meta?: Record<string, unknown> } },
      ) => {
        const call = async () => {
          try {
            if (tool.requires === "token") requireToken(tool.name, ctx.principal);
            else requireReach(tool.name, toolNeed(tool.name, tool.readOnly === true), ctx.principal);
            return toolSuccess(await tool.handler(input as never, ctx));
          } catch (err) {
            return toolFailure(err, onInternal && ((e) => onInternal({ tool: tool.name }, e)));
          }
        };
        const meta = extra.mcpReq._meta;
        if (!trace || meta?.traceparent === undefined) return call();
        return trace.around(
          {
            tool: tool.name,
            meta,
            args: input,
            requestId: extra.mcpReq.id,
            ...(ctx.sessionToken ? { sessionToken: ctx.sessionToken } : {}),
          },
          call,
        );
      },
    );
  }
  attachExtensions(server.server, extensions, caller, onInternal && ((method, e) => onInternal({ method }, e)));
  return server;
}
