/**
 * What a call may cost, known before it goes upstream: the tokens the token budgets reserve for it
 * while it is in flight. Input: a quarter of the request body's size in bytes, rounded up, except
 * that each base64 image counts IMAGE_TOKENS instead of its bytes (an image costs tokens by its
 * pixels, not its encoding). Output: the cap the request sets (Anthropic `max_tokens`; OpenAI Chat
 * Completions `max_completion_tokens` or `max_tokens`, the larger, times `n`; OpenAI Responses
 * `max_output_tokens`; Gemini `generationConfig.maxOutputTokens` times `candidateCount`), or
 * UNCAPPED_OUTPUT_TOKENS (times `n` or `candidateCount`) when it sets none. count_tokens answers
 * cost nothing and reserve nothing.
 */
import type { Wire } from "./apis.js";

/** Bytes of request body per estimated input token. */
export const BYTES_PER_TOKEN = 4;
/** Input tokens reserved for one base64 image (Anthropic's large-image size, about 1,600 tokens). */
export const IMAGE_TOKENS = 1600;
/** Output tokens reserved for a call that sets no output cap. */
export const UNCAPPED_OUTPUT_TOKENS = 4096;

export interface Reservation {
  /** Input tokens, estimated from the body. */
  input: number;
  /** Output tokens: the request's cap (times n), or the default. */
  output: number;
  /** Where `output` comes from, for a refusal's message: "max_tokens 100", "no max_tokens: the default 4096". */
  outputFrom: string;
}

export const reservedTokens = (r: Reservation): number => r.input + r.output;

const NONE: Reservation = { input: 0, output: 0, outputFrom: "none" };

const positiveInt = (v: unknown): number | undefined =>
  typeof v === "number" && Number.isSafeInteger(v) && v > 0 ? v : undefined;

/** The reservation of a call: `body` parsed from `bodyBytes` bytes; `counts` false (count_tokens): none. */
export function reservationOf(
  wire: Wire,
  body: Record<string, unknown>,
  bodyBytes: number,
  counts: boolean,
): Reservation {
  if (!counts) return NONE;
  const images = imagePayloads(body);
  const input = Math.ceil(Math.max(0, bodyBytes - images.bytes) / BYTES_PER_TOKEN) + images.count * IMAGE_TOKENS;
  return { input, ...outputOf(wire, body) };
}

/** One output cap named `name` (or none: the default), times `n` copies (the request's `per` field). */
function capped(cap: number | undefined, name: string, n = 1, per = ""): Omit<Reservation, "input"> {
  const times = n > 1 ? ` x ${per}${n}` : "";
  return cap !== undefined
    ? { output: cap * n, outputFrom: `${name} ${cap}${times}` }
    : { output: UNCAPPED_OUTPUT_TOKENS * n, outputFrom: `no ${name}: the default ${UNCAPPED_OUTPUT_TOKENS}${times}` };
}

function outputOf(wire: Wire, body: Record<string, any>): Omit<Reservation, "input"> {
  switch (wire) {
    case "anthropic":
      return capped(positiveInt(body.max_tokens), "max_tokens");
    case "openai-responses":
      return capped(positiveInt(body.max_output_tokens), "max_output_tokens");
    case "gemini": {
      const g = body.generationConfig;
      return capped(
        positiveInt(g?.maxOutputTokens),
        "maxOutputTokens",
        positiveInt(g?.candidateCount),
        "candidateCount ",
      );
    }
    case "openai": {
      const a = positiveInt(body.max_completion_tokens);
      const b = positiveInt(body.max_tokens);
      const [cap, name] =
        b !== undefined && (a === undefined || b > a) ? [b, "max_tokens"] : [a, "max_completion_tokens"];
      return capped(cap, name, positiveInt(body.n), "n ");
    }
  }
}

/**
 * The base64 images in a body, wherever they sit (messages, tool results): an Anthropic block
 * `{type: "image", source: {type: "base64", data}}`, an OpenAI `data:` URL in an `image_url` (Chat
 * Completions) or an `input_image` (Responses), or a Gemini `inlineData` of an image type.
 * Walked with a stack (a deep body cannot overflow it); returns their count and base64 bytes.
 */
function imagePayloads(body: unknown): { count: number; bytes: number } {
  let count = 0;
  let bytes = 0;
  const stack: unknown[] = [body];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
      continue;
    }
    const o = v as Record<string, any>;
    const data = imageData(o);
    if (data !== undefined) {
      count++;
      bytes += data.length;
      continue;
    }
    for (const k in o) stack.push(o[k]);
  }
  return { count, bytes };
}

function imageData(o: Record<string, any>): string | undefined {
  if (o.type === "image" && o.source?.type === "base64" && typeof o.source.data === "string") return o.source.data;
  if (o.type === "image_url") {
    const url = typeof o.image_url === "string" ? o.image_url : o.image_url?.url;
    if (typeof url === "string" && url.startsWith("data:")) return url;
  }
  if (o.type === "input_image" && typeof o.image_url === "string" && o.image_url.startsWith("data:"))
    return o.image_url;
  const inline = o.inlineData ?? o.inline_data;
  const mime = inline?.mimeType ?? inline?.mime_type;
  if (typeof mime === "string" && mime.startsWith("image/") && typeof inline.data === "string") return inline.data;
  return undefined;
}
