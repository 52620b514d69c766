/**
 * The APIs the sidecar serves, one entry per wire format: which paths each has, what its body must
 * hold, where its model is (the body's `model`, or Gemini's URL path), whether it streams, and the
 * path it goes to upstream, relative to the route's base URL.
 * - Anthropic Messages: POST /v1/messages, /v1/messages/count_tokens (base URL without /v1).
 * - OpenAI Chat Completions and Responses: POST /v1/chat/completions, /v1/responses (base URL with /v1).
 * - Gemini: POST /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens, and
 *   the same under /v1 (base URL without a version); the client's `?key=` never goes upstream.
 */
import type { LlmProvider } from "../protocol.js";

/**
 * A wire format: what the body and the answer (its usage above all) look like. anthropic:
 * Messages; openai: Chat Completions; openai-responses: Responses; gemini: generateContent.
 */
export type Wire = "anthropic" | "openai" | "openai-responses" | "gemini";

export interface Op {
  provider: LlmProvider;
  wire: Wire;
  /** Whether the answer carries usage (not the count-tokens calls). */
  counts: boolean;
  /** Gemini: the API version, model and method in the path. */
  gemini?: { version: string; model: string; method: string };
}

const FIXED: Readonly<Record<string, Op>> = {
  "/v1/messages": { provider: "anthropic", wire: "anthropic", counts: true },
  "/v1/messages/count_tokens": { provider: "anthropic", wire: "anthropic", counts: false },
  "/v1/chat/completions": { provider: "openai", wire: "openai", counts: true },
  "/v1/responses": { provider: "openai", wire: "openai-responses", counts: true },
};

const GEMINI_PATH = /^\/(v1beta|v1)\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/** Every path served, for the message of an unknown one. */
export const SERVED =
  "POST /v1/messages, POST /v1/messages/count_tokens, POST /v1/chat/completions, POST /v1/responses, " +
  "POST /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens";

/** The operation a path (without its query) is, or undefined. */
export function opOf(path: string): Op | undefined {
  const fixed = FIXED[path];
  if (fixed) return fixed;
  const m = GEMINI_PATH.exec(path);
  if (!m) return undefined;
  let model: string;
  try {
    model = decodeURIComponent(m[2]!);
  } catch {
    return undefined;
  }
  const method = m[3]!;
  return {
    provider: "gemini",
    wire: "gemini",
    counts: method !== "countTokens",
    gemini: { version: m[1]!, model, method },
  };
}

/** Whose error shape answers a path that is no operation: Anthropic's under /v1/messages, Gemini's under /v1beta or for /v1/models/…:…, else OpenAI's. */
export function providerOfPath(path: string): LlmProvider {
  if (path.startsWith("/v1/messages")) return "anthropic";
  if (path.startsWith("/v1beta/") || /^\/v1\/models\/[^/]+:/.test(path)) return "gemini";
  return "openai";
}

/** What is wrong with the body, as the field at fault and a message; undefined when nothing is. */
export function bodyProblem(op: Op, body: Record<string, any>): { param: string; message: string } | undefined {
  if (op.wire !== "gemini" && (typeof body.model !== "string" || body.model === ""))
    return { param: "model", message: "model: required, a non-empty string naming the model" };
  switch (op.wire) {
    case "anthropic":
    case "openai":
      return Array.isArray(body.messages)
        ? undefined
        : { param: "messages", message: "messages: required, an array of messages" };
    case "openai-responses":
      return typeof body.input === "string" || Array.isArray(body.input)
        ? undefined
        : { param: "input", message: "input: required, a string or an array of input items" };
    case "gemini":
      if (Array.isArray(body.contents)) return undefined;
      if (op.gemini?.method === "countTokens" && isPlainObject(body.generateContentRequest)) return undefined;
      return { param: "contents", message: "contents: required, an array of contents" };
  }
}

/** The model the call names: Gemini's from the path, the others' from the body. */
export const requestedModel = (op: Op, body: Record<string, any>): string => op.gemini?.model ?? body.model;

/** Whether the answer is a stream. */
export const isStream = (op: Op, body: Record<string, any>): boolean =>
  op.gemini ? op.gemini.method === "streamGenerateContent" : body.stream === true;

/**
 * The path upstream after the route's base path, query included: `model` in place of the
 * requested one (Gemini's path; the others' body is rewritten by the caller), Gemini's `key`
 * parameter taken out.
 */
export function upstreamPath(op: Op, url: string, model: string): string {
  if (op.provider === "anthropic") return url;
  if (op.provider === "openai") return url.slice(3);
  const q = url.indexOf("?");
  const params = new URLSearchParams(q === -1 ? "" : url.slice(q + 1));
  params.delete("key");
  const rest = params.toString();
  const query = rest ? `?${rest}` : "";
  const g = op.gemini!;
  return `/${g.version}/models/${encodeURIComponent(model)}:${g.method}${query}`;
}

/** Gemini's `?key=` parameter (a credential, like x-goog-api-key), when the call is Gemini's. */
export function queryKey(op: Op | undefined, url: string): string | undefined {
  if (op?.provider !== "gemini") return undefined;
  const q = url.indexOf("?");
  return q === -1 ? undefined : (new URLSearchParams(url.slice(q + 1)).get("key") ?? undefined);
}

export const isPlainObject = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === "object" && !Array.isArray(v);
