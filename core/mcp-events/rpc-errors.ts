/**
 * The events extension's JSON-RPC errors, numbered as the design sketch numbers them ("Error
 * Codes"), and the one mapping from svc's own errors (SvcError codes) to them.
 */
import { SvcError } from "../errors.js";
import { McpRpcError } from "../daemon/mcp/extensions.js";

export const RPC = {
  invalidParams: -32602,
  internal: -32603,
  notFound: -32011,
  forbidden: -32012,
  resourceExhausted: -32013,
  unsupported: -32014,
  callbackEndpoint: -32015,
} as const;

/** `data.reason` of a -32602 answer. */
export type InvalidReason = "invalid_params" | "invalid_arguments" | "invalid_url" | "invalid_secret" | "invalid_ttl" | "invalid_cursor";

/** The sketch's `lastError` categories (also `data.reason` of -32015). */
export type CallbackReason = "connection_refused" | "timeout" | "tls_error" | "http_4xx" | "http_5xx" | "challenge_failed";

export const invalidParams = (reason: InvalidReason, message: string): McpRpcError => new McpRpcError(RPC.invalidParams, message, { reason });
export const forbidden = (message: string): McpRpcError => new McpRpcError(RPC.forbidden, message);
export const exhausted = (limit: string, max: number, message: string): McpRpcError => new McpRpcError(RPC.resourceExhausted, message, { limit, max });
export const unsupported = (feature: string, value: string, message: string): McpRpcError => new McpRpcError(RPC.unsupported, message, { feature, value });

const CATEGORIES = new Set<string>(["connection_refused", "timeout", "tls_error", "http_4xx", "http_5xx", "challenge_failed"]);

/**
 * Why a challenge failed, as the sketch's category: the one the verifier put in
 * `details.reason`, else from its code and the egress error it wraps. As the sketch has it, an
 * endpoint that answered without echoing (a wrong echo, a non-2xx, a redirect) is
 * `challenge_failed`; one that could not be reached is `connection_refused`, `timeout` or `tls_error`.
 */
export function callbackReason(err: SvcError): CallbackReason {
  const given = err.details && !Array.isArray(err.details) ? err.details.reason : undefined;
  if (typeof given === "string" && CATEGORIES.has(given)) return given as CallbackReason;
  const cause = SvcError.is(err.cause) ? err.cause : undefined;
  if (err.code === "timeout") {
    // The verifier reports a failed connection as `timeout`; the egress error it wraps says which.
    if (cause?.code !== "connect") return "timeout";
    return /CERT|SSL|TLS|EPROTO/.test(/\(([A-Za-z0-9_]+)\)/.exec(cause.message)?.[1] ?? "") ? "tls_error" : "connection_refused";
  }
  // Refused before connecting (a private address): svc would not reach it.
  if (err.code === "ssrf_blocked" && cause?.code === "private_target") return "connection_refused";
  return "challenge_failed";
}

const CHALLENGE_CODES = new Set(["challenge_failed", "timeout", "ssrf_blocked", "non_2xx"]);

/**
 * An error of the engine or the catalog as the extension answers it: a McpRpcError as it is; the
 * callback verifier's failures -32015 (`data.reason` the sketch's category, `data.svcReason`
 * svc's own); a URL the gate refuses -32602 `invalid_url`; `invalid_input` -32602
 * `invalid_arguments`; `forbidden`/`unauthorized` -32012; `not_found` -32011; anything else
 * -32603 with svc's code.
 */
export function toRpcError(err: unknown): McpRpcError {
  if (err instanceof McpRpcError) return err;
  if (!SvcError.is(err)) return new McpRpcError(RPC.internal, err instanceof Error ? err.message : String(err));
  if (CHALLENGE_CODES.has(err.code)) return new McpRpcError(RPC.callbackEndpoint, err.message, { reason: callbackReason(err), svcReason: err.code });
  if (err.code === "non_https") return invalidParams("invalid_url", err.message);
  if (err.code === "invalid_input") return invalidParams("invalid_arguments", err.message);
  if (err.code === "forbidden" || err.code === "unauthorized") return forbidden(err.message);
  if (err.code === "not_found") return new McpRpcError(RPC.notFound, err.message);
  return new McpRpcError(RPC.internal, err.message, { svcReason: err.code });
}
