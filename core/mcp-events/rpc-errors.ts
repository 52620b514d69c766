/**
 * The events extension's own JSON-RPC errors, numbered as the design sketch numbers them ("Error
 * Codes"): what it adds on top of the one mapping of svc's errors that every MCP extension method
 * gets (core/daemon/mcp/rpc-error.ts: -32011 not found, -32012 forbidden, -32602 invalid input,
 * -32603 with a generic message for anything unexpected).
 */
import { SvcError } from "../errors.js";
import { INVALID_PARAMS, McpRpcError } from "../daemon/mcp/extensions.js";

export const RPC = {
  resourceExhausted: -32013,
  unsupported: -32014,
  callbackEndpoint: -32015,
} as const;

/** `data.reason` of a -32602 answer. */
export type InvalidReason =
  | "invalid_params"
  | "invalid_arguments"
  | "invalid_url"
  | "invalid_secret"
  | "invalid_ttl"
  | "invalid_cursor";

/** The sketch's `lastError` categories (also `data.reason` of -32015). */
export type CallbackReason =
  | "connection_refused"
  | "timeout"
  | "tls_error"
  | "http_4xx"
  | "http_5xx"
  | "challenge_failed";

export const invalidParams = (reason: InvalidReason, message: string): McpRpcError =>
  new McpRpcError(INVALID_PARAMS, message, { reason });
export const forbidden = (message: string): SvcError => new SvcError("forbidden", message);
export const exhausted = (limit: string, max: number, message: string): McpRpcError =>
  new McpRpcError(RPC.resourceExhausted, message, { limit, max });
export const unsupported = (feature: string, value: string, message: string): McpRpcError =>
  new McpRpcError(RPC.unsupported, message, { feature, value });

const CATEGORIES = new Set<string>([
  "connection_refused",
  "timeout",
  "tls_error",
  "http_4xx",
  "http_5xx",
  "challenge_failed",
]);

export const isCallbackReason = (v: unknown): v is CallbackReason => typeof v === "string" && CATEGORIES.has(v);

/**
 * Why a challenge failed, as the sketch's category: the one the webhook target's verifier states
 * in `details.reason` once it tried the POST (it alone saw the connection: refused, timed out, a
 * TLS failure, or an answer without the echo); a failure before anything was sent (a malformed
 * secret) is `challenge_failed`.
 */
export function callbackReason(err: SvcError): CallbackReason {
  const given = err.details && !Array.isArray(err.details) ? err.details.reason : undefined;
  return isCallbackReason(given) ? given : "challenge_failed";
}

const CHALLENGE_CODES = new Set(["challenge_failed", "timeout", "ssrf_blocked", "non_2xx", "tls_untrusted"]);

/**
 * An error of the engine or the catalog as the events extension answers it, where its meaning is
 * the extension's own: the callback verifier's failures -32015 (`data.reason` the sketch's
 * category, `data.svcReason` svc's own); a URL the gate refuses -32602 `invalid_url`;
 * `invalid_input` -32602 `invalid_arguments`. Anything else is returned as it is, for the one
 * mapping every extension method's failure goes through.
 */
export function asEventsError(err: unknown): unknown {
  if (err instanceof McpRpcError || !SvcError.is(err)) return err;
  if (CHALLENGE_CODES.has(err.code))
    return new McpRpcError(RPC.callbackEndpoint, err.message, { reason: callbackReason(err), svcReason: err.code });
  if (err.code === "non_https") return invalidParams("invalid_url", err.message);
  if (err.code === "invalid_input") return invalidParams("invalid_arguments", err.message);
  return err;
}
