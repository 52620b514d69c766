/**
 * `/mcp`: the TOOLS table served with the official MCP SDK over Streamable HTTP.
 *
 * Stateless: every POST builds a fresh McpServer and transport (no `Mcp-Session-Id`), answered
 * as plain JSON. Nothing is kept between requests, so a client survives a daemon restart without
 * re-initializing, tools registered late are seen at once, and each call runs with the principal
 * of its own request. `GET /mcp` (the optional server-to-client stream) is answered 405, as the
 * transport specification allows for a server that sends no unsolicited messages.
 */
import type { ServerResponse } from "node:http";
import type { DependencyContainer } from "tsyringe";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { RouteRequest } from "../plugin-api/http.js";
import { toSvcError } from "../errors.js";
import { LOGGER, ROUTES, TOOLS, resolve } from "../tokens.js";
import { presentedSessionToken } from "../workspaces/lineage.js";
import { buildMcpServer } from "./mcp/build-server.js";
import { MCP_CALL_TRACE } from "./mcp/call-trace.js";
import { parseJsonBody } from "./json-body.js";
import type { DaemonModule } from "./module.js";

const MAX_MCP_BODY = 4 * 1024 * 1024;

export const mcpModule: DaemonModule = {
  name: "mcp",
  async start(c: DependencyContainer) {
    const tools = resolve(c, TOOLS);
    const logger = resolve(c, LOGGER).child({ module: "mcp" });
    resolve(c, ROUTES).add({
      method: "POST",
      path: "/mcp",
      auth: "loopback-or-token",
      // A read-scoped caller may list tools and call the read-only ones; each tool checks its own need.
      remote: "read",
      maxBodyBytes: MAX_MCP_BODY,
      handler: async (req: RouteRequest) => {
        let message: unknown;
        try {
          // The one JSON body parser: depth-limited, and its errors never quote the body (V8's own
          // message quotes the text around the fault, which may be a secret being set).
          message = parseJsonBody(req.body);
        } catch (err) {
          writeJsonRpcError(req.res, 400, -32700, `Parse error: ${(err as Error).message}`);
          return undefined;
        }
        const sessionToken = presentedSessionToken(req.headers);
        const server = buildMcpServer(
          tools.list(),
          { principal: req.principal, ...(sessionToken ? { sessionToken } : {}) },
          (tool, err) => logger.error("tool failed", { tool, code: "internal", error: toSvcError(err).message }),
          c.isRegistered(MCP_CALL_TRACE as never) ? resolve(c, MCP_CALL_TRACE) : undefined,
        );
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
        req.res.on("close", () => {
          void transport.close();
          void server.close();
        });
        transport.onerror = (err) => logger.warn("mcp transport error", { error: err.message });
        await server.connect(transport);
        await transport.handleRequest(req.raw, req.res, message);
        return undefined;
      },
    });
  },
};

function writeJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
