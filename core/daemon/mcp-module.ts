/**
 * `/mcp`: the TOOLS table and the registered MCP extensions, served with the official MCP SDK
 * over Streamable HTTP to clients of both protocol eras (2025-era `initialize` clients and
 * 2026-07-28 per-request-envelope clients; ./mcp/serve-request.ts).
 *
 * Stateless: every POST builds a fresh McpServer (no `Mcp-Session-Id`). Nothing is kept between
 * requests, so a client survives a daemon restart without re-initializing, tools registered late
 * are seen at once, and each call runs with the principal of its own request. `GET /mcp` (the
 * optional 2025-era server-to-client stream) is answered 405, as the transport specification
 * allows for a server that sends no unsolicited messages.
 */
import type { ServerResponse } from "node:http";
import type { DependencyContainer } from "tsyringe";
import type { RouteRequest } from "../plugin-api/http.js";
import { toSvcError } from "../errors.js";
import { LOGGER, ROUTES, TOOLS, resolve } from "../tokens.js";
import { presentedSessionToken } from "../workspaces/lineage.js";
import { MCP_CALL_TRACE } from "./mcp/call-trace.js";
import { MCP_EXTENSIONS } from "./mcp/extensions.js";
import { parseJsonBody } from "./json-body.js";
import type { DaemonModule } from "./module.js";

const MAX_MCP_BODY = 4 * 1024 * 1024;

/** The MCP SDK and what builds on it load at the first `/mcp` request, not when the daemon starts. */
let serving: Promise<[typeof import("./mcp/build-server.js"), typeof import("./mcp/serve-request.js")]> | undefined;
const loadServing = () =>
  (serving ??= Promise.all([import("./mcp/build-server.js"), import("./mcp/serve-request.js")]));

export const mcpModule: DaemonModule = {
  name: "mcp",
  async start(c: DependencyContainer) {
    const tools = resolve(c, TOOLS);
    const extensions = resolve(c, MCP_EXTENSIONS);
    const logger = resolve(c, LOGGER).child({ module: "mcp" });
    const onInternal = (call: { tool: string } | { method: string }, err: unknown) =>
      logger.error("tool" in call ? "tool failed" : "extension method failed", {
        ...call,
        code: "internal",
        error: toSvcError(err).message,
      });
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
        const [{ buildMcpServer }, { serveMcpRequest }] = await loadServing();
        const sessionToken = presentedSessionToken(req.headers);
        const trace = c.isRegistered(MCP_CALL_TRACE as never) ? resolve(c, MCP_CALL_TRACE) : undefined;
        await serveMcpRequest(
          { path: req.path, headers: req.headers, body: req.body, message, res: req.res },
          (era) =>
            buildMcpServer({
              tools: tools.list(),
              extensions: extensions.list(),
              caller: { principal: req.principal, era, ...(sessionToken ? { sessionToken } : {}) },
              onInternal,
              ...(trace ? { trace } : {}),
            }),
          (err) => logger.warn("mcp transport error", { error: err.message }),
        );
        return undefined;
      },
    });
  },
};

function writeJsonRpcError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
