/**
 * How a ToolDef's outcome becomes an MCP `CallToolResult`: the value as JSON text (and as
 * `structuredContent` when it is a plain object); an error as a tool error whose text is
 * `{error: {code, message, details}}`, the same shape and the same rule as the daemon's HTTP error
 * bodies: anything thrown that is not an SvcError is `internal` with a generic message (its own
 * text may quote paths or inputs), and `onInternal` gets it for the log. An error
 * carries no `structuredContent`: clients check that against the tool's output schema, which
 * describes a success.
 */
import type { CallToolResult } from "@modelcontextprotocol/server";
import { SvcError, toPublicError } from "../../errors.js";

export function toolSuccess(value: unknown): CallToolResult {
  const text = value === undefined ? "null" : JSON.stringify(value, null, 2);
  const result: CallToolResult = { content: [{ type: "text", text }] };
  if (isPlainObject(value)) result.structuredContent = value;
  return result;
}

export function toolFailure(err: unknown, onInternal?: (err: unknown) => void): CallToolResult {
  const e = toPublicError(err);
  if (!SvcError.is(err)) onInternal?.(err);
  const error = e.toJSON();
  return { isError: true, content: [{ type: "text", text: JSON.stringify({ error }, null, 2) }] };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
