/**
 * What an MCP extension method's caller sees when it fails: a JSON-RPC error. An McpRpcError
 * keeps its own code, message and data; an SvcError becomes the code of the same meaning (the
 * events sketch's general-purpose codes: -32011 not found, -32012 forbidden; -32602 for invalid
 * input); anything else is -32603 with a generic message (its own text may quote paths or inputs),
 * and `onInternal` gets it for the log. Data goes through the secret redaction on the way out.
 */
import { ProtocolError } from "@modelcontextprotocol/server";
import { SvcError, issuesToDetails, type SvcErrorDetail } from "../../errors.js";
import { FORBIDDEN, INTERNAL_ERROR, INVALID_PARAMS, McpRpcError, NOT_FOUND } from "./extensions.js";
import { redactLikelySecrets } from "./redact.js";

const INTERNAL_MESSAGE = "internal error; the daemon log has the cause";

/** The JSON-RPC code for an SvcError's code; `undefined`: -32603. */
const CODE_FOR: Partial<Record<SvcError["code"], number>> = {
  not_found: NOT_FOUND,
  forbidden: FORBIDDEN,
  unauthorized: FORBIDDEN,
  invalid_input: INVALID_PARAMS,
  usage: INVALID_PARAMS,
  config_invalid: INVALID_PARAMS,
};

export function toRpcError(err: unknown, onInternal?: (err: unknown) => void): ProtocolError {
  if (err instanceof McpRpcError) return rpcError(err.code, err.message, err.data);
  if (SvcError.is(err) && err.code !== "internal") {
    const code = CODE_FOR[err.code] ?? INTERNAL_ERROR;
    const reason = code === INVALID_PARAMS ? "invalid_params" : err.code;
    return rpcError(code, err.message, { reason, ...(err.details === undefined ? {} : { details: err.details }) });
  }
  onInternal?.(err);
  return new ProtocolError(INTERNAL_ERROR, INTERNAL_MESSAGE);
}

/** -32602 for params that fail a method's schema: `data: {reason: "invalid_params", details: [{path, message}]}`. */
export function invalidParams(
  method: string,
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
): ProtocolError {
  const details: SvcErrorDetail[] = issuesToDetails(issues);
  const summary = details.map((d) => `${d.path}: ${d.message}`).join("; ");
  return rpcError(INVALID_PARAMS, `invalid params for ${method}: ${summary}`, { reason: "invalid_params", details });
}

function rpcError(code: number, message: string, data?: Record<string, unknown>): ProtocolError {
  return new ProtocolError(code, message, data === undefined ? undefined : redactLikelySecrets(data));
}
