/**
 * Token usage read from an upstream's answer, without holding it: a JSON body once it has ended,
 * or a stream's events as they pass (a tap fed the same chunks the client gets).
 * Anthropic input = input_tokens + cache_read_input_tokens + cache_creation_input_tokens;
 * OpenAI Chat Completions input = prompt_tokens, output = completion_tokens;
 * OpenAI Responses input = input_tokens, output = output_tokens (in `response.completed`'s `response` when streaming);
 * Gemini input = promptTokenCount + toolUsePromptTokenCount, output = candidatesTokenCount + thoughtsTokenCount
 * (`usageMetadata`, the last chunk's when streaming).
 */
import { StringDecoder } from "node:string_decoder";
import type { Wire } from "./apis.js";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

const ZERO: Usage = { inputTokens: 0, outputTokens: 0 };

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);
const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object";

/** Anthropic usage fields seen so far (later events overwrite: the counts are whole-message totals). */
interface AnthropicCounts {
  input?: number;
  cacheRead?: number;
  cacheWrite?: number;
  output?: number;
}

function mergeAnthropic(acc: AnthropicCounts, u: any): void {
  if (!isObject(u)) return;
  acc.input = num(u.input_tokens) ?? acc.input;
  acc.cacheRead = num(u.cache_read_input_tokens) ?? acc.cacheRead;
  acc.cacheWrite = num(u.cache_creation_input_tokens) ?? acc.cacheWrite;
  acc.output = num(u.output_tokens) ?? acc.output;
}

const anthropicUsage = (a: AnthropicCounts): Usage => ({
  inputTokens: (a.input ?? 0) + (a.cacheRead ?? 0) + (a.cacheWrite ?? 0),
  outputTokens: a.output ?? 0,
});

/** The usage object of each wire other than Anthropic's (whose events merge), or undefined. */
const USAGE_OF: Record<Exclude<Wire, "anthropic">, (u: any) => Usage | undefined> = {
  openai: (u) =>
    isObject(u) ? { inputTokens: num(u.prompt_tokens) ?? 0, outputTokens: num(u.completion_tokens) ?? 0 } : undefined,
  "openai-responses": (u) =>
    isObject(u) ? { inputTokens: num(u.input_tokens) ?? 0, outputTokens: num(u.output_tokens) ?? 0 } : undefined,
  gemini: (u) =>
    isObject(u)
      ? {
          inputTokens: (num(u.promptTokenCount) ?? 0) + (num(u.toolUsePromptTokenCount) ?? 0),
          outputTokens: (num(u.candidatesTokenCount) ?? 0) + (num(u.thoughtsTokenCount) ?? 0),
        }
      : undefined,
};

/** Where a wire's answer (a JSON body, or one stream event) holds its usage object. */
const usageField = (wire: Wire, data: any, event: boolean): unknown =>
  wire === "gemini"
    ? data?.usageMetadata
    : wire === "openai-responses" && event
      ? // response.completed, response.incomplete, response.failed
        data?.response?.usage
      : data?.usage;

/** Usage in a whole JSON answer; zero when it has none. Gemini's unstreamed streamGenerateContent is an array of chunks: the last with usage counts. */
export function usageOfJson(wire: Wire, text: string): Usage {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return ZERO;
  }
  if (wire === "anthropic") {
    const acc: AnthropicCounts = {};
    mergeAnthropic(acc, body?.usage);
    return anthropicUsage(acc);
  }
  if (wire === "gemini" && Array.isArray(body)) body = body.findLast((c) => isObject(c?.usageMetadata));
  return USAGE_OF[wire](usageField(wire, body, false)) ?? ZERO;
}

/** Reads usage from a stream's `data:` lines as chunks pass; only lines that mention usage are parsed. */
export class SseUsageTap {
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";
  private readonly anthropic: AnthropicCounts = {};
  private last: Usage | undefined;
  private readonly marker: string;
  /** Whether any event so far carried usage. */
  seen = false;

  constructor(private readonly wire: Wire) {
    this.marker = wire === "gemini" ? '"usageMetadata"' : '"usage"';
  }

  feed(chunk: Buffer): void {
    const text = this.partial + this.decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      this.line(text, start, nl);
      start = nl + 1;
    }
    this.partial = text.slice(start);
  }

  /** One line: [start, end) of text. */
  private line(text: string, start: number, end: number): void {
    if (!text.startsWith("data:", start)) return;
    const line = text.slice(start + 5, end);
    if (!line.includes(this.marker)) return;
    let data: any;
    try {
      data = JSON.parse(line);
    } catch {
      return;
    }
    if (this.wire === "anthropic") {
      const u =
        data?.type === "message_start" ? data.message?.usage : data?.type === "message_delta" ? data.usage : undefined;
      if (isObject(u)) {
        mergeAnthropic(this.anthropic, u);
        this.seen = true;
      }
    } else {
      this.last = USAGE_OF[this.wire](usageField(this.wire, data, true)) ?? this.last;
      this.seen = this.last !== undefined;
    }
  }

  usage(): Usage {
    return this.wire === "anthropic" ? anthropicUsage(this.anthropic) : (this.last ?? ZERO);
  }
}
