/**
 * Serves one POST /mcp with the MCP SDK, in whichever protocol era the client speaks:
 *
 * - 2026-07-28 (a request carrying the per-request `_meta` envelope, `server/discover` included):
 *   `createMcpHandler` with a server from `factory("modern")`.
 * - 2025-era (`initialize`, and requests without the envelope): a stateless Streamable HTTP
 *   exchange with a server from `factory("legacy")`, answered as plain JSON. This is the SDK's
 *   documented hand-wired legacy leg (`isLegacyRequest` in front of a `legacy: "reject"` handler),
 *   kept instead of its built-in fallback because that one always answers over SSE.
 *
 * Nothing is kept between requests: a client survives a daemon restart without re-initializing.
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import {
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isLegacyRequest,
  type McpServer,
} from "@modelcontextprotocol/server";
import { toWebRequest, writeWebResponse } from "./web-bridge.js";

export type McpEra = "legacy" | "modern";

export interface McpHttpExchange {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The JSON-RPC message(s) parsed from `body`. */
  message: unknown;
  res: ServerResponse;
}

export async function serveMcpRequest(
  exchange: McpHttpExchange,
  factory: (era: McpEra) => McpServer,
  onerror: (err: Error) => void,
): Promise<void> {
  const abort = new AbortController();
  exchange.res.on("close", () => abort.abort());
  const request = toWebRequest(exchange.path, exchange.headers, exchange.body, abort.signal);
  const legacy = await isLegacyRequest(request, exchange.message);
  const { response, close } = legacy
    ? await serveLegacy(request, exchange.message, factory, onerror)
    : await serveModern(request, exchange.message, factory, onerror);
  try {
    await writeWebResponse(response, exchange.res);
  } finally {
    await close();
  }
}

interface Served {
  response: Response;
  /** Releases the server (and transport) once the response is written. */
  close(): Promise<void>;
}

async function serveModern(
  request: Request,
  message: unknown,
  factory: (era: McpEra) => McpServer,
  onerror: (err: Error) => void,
): Promise<Served> {
  const handler = createMcpHandler(({ era }) => factory(era), { legacy: "reject", onerror });
  const response = await handler.fetch(request, { parsedBody: message });
  return { response, close: () => handler.close() };
}

async function serveLegacy(
  request: Request,
  message: unknown,
  factory: (era: McpEra) => McpServer,
  onerror: (err: Error) => void,
): Promise<Served> {
  const server = factory("legacy");
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  transport.onerror = onerror;
  await server.connect(transport);
  const close = async () => {
    await transport.close().catch(() => {});
    await server.close().catch(() => {});
  };
  try {
    return { response: await transport.handleRequest(request, { parsedBody: message }), close };
  } catch (err) {
    await close();
    throw err;
  }
}
