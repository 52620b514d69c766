/**
 * Token usage read from an upstream's answer, without holding it: a JSON body once it has ended,
 * or a stream's events as they pass (a tap fed the same chunks the client gets).
 * Anthropic input = input_tokens + cache_read_input_tokens + cache_creation_input_tokens;
 * OpenAI input = prompt_tokens, output = completion_tokens.
 */
import { StringDecoder } from "node:string_decoder";
import type { LlmProvider } from "../protocol.js";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);

/** Anthropic usage fields seen so far (later events overwrite: the counts are whole-message totals). */
interface AnthropicCounts {
  input?: number;
  cacheRead?: number;
  cacheWrite?: number;
  output?: number;
}

function mergeAnthropic(acc: AnthropicCounts, u: any): void {
  if (u === null || typeof u !== "object") return;
  acc.input = num(u.input_tokens) ?? acc.input;
  acc.cacheRead = num(u.cache_read_input_tokens) ?? acc.cacheRead;
  acc.cacheWrite = num(u.cache_creation_input_tokens) ?? acc.cacheWrite;
  acc.output = num(u.output_tokens) ?? acc.output;
}

const anthropicUsage = (a: AnthropicCounts): Usage => ({
  inputTokens: (a.input ?? 0) + (a.cacheRead ?? 0) + (a.cacheWrite ?? 0),
  outputTokens: a.output ?? 0,
});

function openaiUsage(u: any): Usage | undefined {
  if (u === null || typeof u !== "object") return undefined;
  return { inputTokens: num(u.prompt_tokens) ?? 0, outputTokens: num(u.completion_tokens) ?? 0 };
}

/** Usage in a whole JSON answer (a message or a chat completion); zero when it has none. */
export function usageOfJson(api: LlmProvider, text: string): Usage {
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return { inputTokens: 0, outputTokens: 0 };
  }
  if (api === "anthropic") {
    const acc: AnthropicCounts = {};
    mergeAnthropic(acc, body?.usage);
    return anthropicUsage(acc);
  }
  return openaiUsage(body?.usage) ?? { inputTokens: 0, outputTokens: 0 };
}

/** Reads usage from a stream's `data:` lines as chunks pass; only lines that mention usage are parsed. */
export class SseUsageTap {
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";
  private readonly anthropic: AnthropicCounts = {};
  private openai: Usage | undefined;
  /** Whether any event so far carried usage. */
  seen = false;

  constructor(private readonly api: LlmProvider) {}

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
    if (!line.includes('"usage"')) return;
    let data: any;
    try {
      data = JSON.parse(line);
    } catch {
      return;
    }
    if (this.api === "anthropic") {
      const u =
        data?.type === "message_start" ? data.message?.usage : data?.type === "message_delta" ? data.usage : undefined;
      if (u !== null && typeof u === "object") {
        mergeAnthropic(this.anthropic, u);
        this.seen = true;
      }
    } else {
      this.openai = openaiUsage(data?.usage) ?? this.openai;
      this.seen = this.openai !== undefined;
    }
  }

  usage(): Usage {
    return this.api === "anthropic"
      ? anthropicUsage(this.anthropic)
      : (this.openai ?? { inputTokens: 0, outputTokens: 0 });
  }
}
