/**
 * The hook through which tracing (core/tracing) sees the daemon's MCP tool calls: a call whose
 * request carries `_meta.traceparent` (an agent of a traced session passing its trace on) runs
 * inside {@link McpCallTrace.around}, which records it as a span under that trace.
 */
import { token } from "../../tokens.js";

export interface McpToolCall {
  tool: string;
  /** The request's `_meta` (MCP's reserved field), as the client sent it. */
  meta?: Record<string, unknown>;
  args: unknown;
  requestId?: string | number;
  /** The caller's session token (`X-Svc-Session-Token`), when it presented one. */
  sessionToken?: string;
}

export interface McpCallTrace {
  around<T extends { isError?: boolean }>(call: McpToolCall, run: () => Promise<T>): Promise<T>;
}

/** Registered by the tracing module; absent, calls run as they are. */
export const MCP_CALL_TRACE = token<McpCallTrace>("mcp-call-trace");
