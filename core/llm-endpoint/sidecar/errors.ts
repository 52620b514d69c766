/**
 * The sidecar's own error answers, in the shape of the API the client called, so the client's SDK
 * raises its usual error class (by status) with a readable message.
 * Anthropic: {"type":"error","error":{"type","message"}}; OpenAI: {"error":{"message","type","param","code"}};
 * Gemini: {"error":{"code","message","status"}} (code: the HTTP status; status: Google's canonical code).
 */
import type { ServerResponse } from "node:http";
import type { LlmProvider } from "../protocol.js";

/** What went wrong, in Anthropic's error types (OpenAI's type and code are derived, or given). */
export type ErrorKind =
  | "invalid_request_error"
  | "authentication_error"
  | "permission_error"
  | "not_found_error"
  | "rate_limit_error"
  | "api_error"
  | "overloaded_error";

export interface SidecarError {
  status: number;
  kind: ErrorKind;
  message: string;
  /** OpenAI only: the field at fault, and a code (default: derived from the kind). */
  param?: string;
  code?: string;
  /** OpenAI only: the error type, when it is not the kind's usual one (e.g. insufficient_quota). */
  openaiType?: string;
  headers?: Record<string, string>;
}

const OPENAI_TYPE: Record<ErrorKind, string> = {
  invalid_request_error: "invalid_request_error",
  authentication_error: "invalid_request_error",
  permission_error: "invalid_request_error",
  not_found_error: "invalid_request_error",
  rate_limit_error: "requests",
  api_error: "server_error",
  overloaded_error: "server_error",
};

const OPENAI_CODE: Partial<Record<ErrorKind, string>> = {
  authentication_error: "invalid_api_key",
  rate_limit_error: "rate_limit_exceeded",
};

const GEMINI_STATUS: Record<ErrorKind, string> = {
  invalid_request_error: "INVALID_ARGUMENT",
  authentication_error: "UNAUTHENTICATED",
  permission_error: "PERMISSION_DENIED",
  not_found_error: "NOT_FOUND",
  rate_limit_error: "RESOURCE_EXHAUSTED",
  api_error: "INTERNAL",
  overloaded_error: "UNAVAILABLE",
};

/** Google's canonical code of an error: by its kind, and for a server error by its status (502, 504). */
function geminiStatus(e: SidecarError): string {
  if (e.kind === "api_error" && e.status === 502) return "UNAVAILABLE";
  if (e.kind === "api_error" && e.status === 504) return "DEADLINE_EXCEEDED";
  if (e.status === 405) return "UNIMPLEMENTED";
  return GEMINI_STATUS[e.kind];
}

export function errorBody(api: LlmProvider, e: SidecarError): string {
  if (api === "anthropic") return JSON.stringify({ type: "error", error: { type: e.kind, message: e.message } });
  if (api === "gemini")
    return JSON.stringify({ error: { code: e.status, message: e.message, status: geminiStatus(e) } });
  return JSON.stringify({
    error: {
      message: e.message,
      type: e.openaiType ?? OPENAI_TYPE[e.kind],
      param: e.param ?? null,
      code: e.code ?? OPENAI_CODE[e.kind] ?? null,
    },
  });
}

/**
 * A stream already answered 200 cannot change its status: the error goes in as the stream's last
 * event (Anthropic: an `error` event, which its SDK raises; OpenAI and Gemini: a data line holding
 * an error, which theirs raise).
 */
export function errorEvent(api: LlmProvider, e: SidecarError): string {
  return api === "anthropic" ? `event: error\ndata: ${errorBody(api, e)}\n\n` : `data: ${errorBody(api, e)}\n\n`;
}

export function sendError(res: ServerResponse, api: LlmProvider, e: SidecarError): void {
  const body = errorBody(api, e);
  res.writeHead(e.status, {
    ...e.headers,
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}
