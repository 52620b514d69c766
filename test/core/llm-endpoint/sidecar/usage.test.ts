/**
 * Usage read from streams however the bytes are split into chunks (a multi-byte character or a
 * line cut anywhere), and the OpenAI usage-only chunk taken out whole.
 */
import fc from "fast-check";
import { expect, test } from "vitest";
import { UsageChunkFilter } from "../../../../core/llm-endpoint/sidecar/usage-chunk-filter.js";
import { SseUsageTap, usageOfJson } from "../../../../core/llm-endpoint/sidecar/usage.js";

const sse = (data: object, event?: string) => `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`;

const anthropicStream =
  sse(
    {
      type: "message_start",
      message: {
        usage: { input_tokens: 11, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 1 },
      },
    },
    "message_start",
  ) +
  sse(
    { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: 'héllo ✓ "usage"' } },
    "content_block_delta",
  ) +
  sse({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 42 } }, "message_delta") +
  sse({ type: "message_stop" }, "message_stop");

const openaiBody = [
  sse({ choices: [{ index: 0, delta: { content: "ünï" } }] }),
  sse({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }),
];
const openaiUsage = sse({ choices: [], usage: { prompt_tokens: 13, completion_tokens: 8 } });
const openaiStream = openaiBody.join("") + openaiUsage + "data: [DONE]\n\n";

/** The bytes of `text` cut at the given offsets. */
const cut = (text: string, at: number[]) => {
  const bytes = Buffer.from(text);
  const points = [...new Set(at.map((n) => n % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let prev = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  return out;
};

test("property: a stream's usage does not depend on how it is chunked", () => {
  fc.assert(
    fc.property(fc.array(fc.nat(), { maxLength: 12 }), (at) => {
      const a = new SseUsageTap("anthropic");
      for (const c of cut(anthropicStream, at)) a.feed(c);
      expect(a.usage()).toEqual({ inputTokens: 18, outputTokens: 42 });
      const o = new SseUsageTap("openai");
      for (const c of cut(openaiStream, at)) o.feed(c);
      expect(o.usage()).toEqual({ inputTokens: 13, outputTokens: 8 });
    }),
  );
});

test("property: the filter passes every event whole but the usage-only one, however chunked", () => {
  fc.assert(
    fc.property(fc.array(fc.nat(), { maxLength: 12 }), (at) => {
      const f = new UsageChunkFilter();
      let out = "";
      for (const c of cut(openaiStream, at)) out += f.filter(c);
      out += f.flush();
      expect(out).toBe(openaiBody.join("") + "data: [DONE]\n\n");
    }),
  );
});

test("JSON answers: anthropic input counts cache reads and writes; no usage or no JSON is zero", () => {
  expect(
    usageOfJson(
      "anthropic",
      JSON.stringify({
        usage: { input_tokens: 3, cache_read_input_tokens: 4, cache_creation_input_tokens: 5, output_tokens: 6 },
      }),
    ),
  ).toEqual({ inputTokens: 12, outputTokens: 6 });
  expect(usageOfJson("openai", JSON.stringify({ usage: { prompt_tokens: 7, completion_tokens: 2 } }))).toEqual({
    inputTokens: 7,
    outputTokens: 2,
  });
  expect(usageOfJson("openai", "{}")).toEqual({ inputTokens: 0, outputTokens: 0 });
  expect(usageOfJson("anthropic", "<html>")).toEqual({ inputTokens: 0, outputTokens: 0 });
});

const responsesStream =
  sse({ type: "response.created", response: { id: "r", status: "in_progress", usage: null } }, "response.created") +
  sse({ type: "response.output_text.delta", delta: 'ünï "usage"' }, "response.output_text.delta") +
  sse(
    {
      type: "response.completed",
      response: { id: "r", usage: { input_tokens: 21, output_tokens: 4, total_tokens: 25 } },
    },
    "response.completed",
  );

/** Gemini's SSE: CRLF-separated chunks, each with the prompt's count, the last with the candidates' too. */
const geminiStream = [
  { candidates: [{ content: { parts: [{ text: "ünï" }] } }], usageMetadata: { promptTokenCount: 31 } },
  {
    candidates: [{ content: { parts: [{ text: " done" }] }, finishReason: "STOP" }],
    usageMetadata: { promptTokenCount: 31, candidatesTokenCount: 9, thoughtsTokenCount: 2, totalTokenCount: 42 },
  },
]
  .map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`)
  .join("");

test("property: Responses and Gemini streams' usage does not depend on how they are chunked", () => {
  fc.assert(
    fc.property(fc.array(fc.nat(), { maxLength: 12 }), (at) => {
      const r = new SseUsageTap("openai-responses");
      for (const c of cut(responsesStream, at)) r.feed(c);
      expect(r.usage()).toEqual({ inputTokens: 21, outputTokens: 4 });
      const g = new SseUsageTap("gemini");
      for (const c of cut(geminiStream, at)) g.feed(c);
      expect(g.usage()).toEqual({ inputTokens: 31, outputTokens: 11 });
      expect(g.seen).toBe(true);
    }),
  );
});

test("JSON answers: Responses' top-level usage; Gemini's usageMetadata, also the last of an unstreamed chunk array", () => {
  expect(usageOfJson("openai-responses", JSON.stringify({ usage: { input_tokens: 5, output_tokens: 3 } }))).toEqual({
    inputTokens: 5,
    outputTokens: 3,
  });
  const meta = { promptTokenCount: 8, toolUsePromptTokenCount: 1, candidatesTokenCount: 4 };
  expect(usageOfJson("gemini", JSON.stringify({ usageMetadata: meta }))).toEqual({ inputTokens: 9, outputTokens: 4 });
  expect(
    usageOfJson("gemini", JSON.stringify([{ usageMetadata: { promptTokenCount: 8 } }, { usageMetadata: meta }, {}])),
  ).toEqual({ inputTokens: 9, outputTokens: 4 });
  expect(usageOfJson("gemini", JSON.stringify({ usage: { input_tokens: 5 } }))).toEqual({
    inputTokens: 0,
    outputTokens: 0,
  });
});
