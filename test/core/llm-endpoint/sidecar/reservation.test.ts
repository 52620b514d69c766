/**
 * The estimate a call reserves, as docs/llm-endpoint.md states it: input = ceil(body bytes / 4)
 * with each base64 image counted as 1,600 tokens instead of its bytes; output = the request's cap
 * (times n), or 4,096 without one; nothing for count_tokens.
 */
import { expect, test } from "vitest";
import { reservationOf } from "../../../../core/llm-endpoint/sidecar/reservation.js";

const sized = (body: Record<string, unknown>) => {
  const text = JSON.stringify(body);
  return [body, Buffer.byteLength(text)] as const;
};

test("input is a quarter of the body's bytes, rounded up (UTF-8 bytes, not characters)", () => {
  const [body, bytes] = sized({
    model: "m",
    max_tokens: 10,
    messages: [{ role: "user", content: "日本語のテキスト" }],
  });
  expect(reservationOf("anthropic", body, bytes, true)).toEqual({
    input: Math.ceil(bytes / 4),
    output: 10,
    outputFrom: "max_tokens 10",
  });
});

test("a base64 image counts 1,600 tokens, not its bytes, in either API and inside tool results", () => {
  const data = "A".repeat(400_000);
  const [ant, antBytes] = sized({
    model: "m",
    max_tokens: 1,
    messages: [
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "t",
            content: [{ type: "image", source: { type: "base64", media_type: "image/png", data } }],
          },
        ],
      },
    ],
  });
  expect(reservationOf("anthropic", ant, antBytes, true).input).toBe(Math.ceil((antBytes - data.length) / 4) + 1600);
  const url = `data:image/png;base64,${data}`;
  const [oai, oaiBytes] = sized({
    model: "m",
    messages: [{ role: "user", content: [{ type: "image_url", image_url: { url } }] }],
  });
  expect(reservationOf("openai", oai, oaiBytes, true).input).toBe(Math.ceil((oaiBytes - url.length) / 4) + 1600);
});

test("OpenAI output: the larger of max_completion_tokens and max_tokens, times n; no cap reserves 4,096 each", () => {
  const out = (body: Record<string, unknown>) => {
    const { output, outputFrom } = reservationOf("openai", { model: "m", messages: [], ...body }, 10, true);
    return { output, outputFrom };
  };
  expect(out({ max_completion_tokens: 300, max_tokens: 200 })).toEqual({
    output: 300,
    outputFrom: "max_completion_tokens 300",
  });
  expect(out({ max_tokens: 200, n: 3 })).toEqual({ output: 600, outputFrom: "max_tokens 200 x n 3" });
  expect(out({ n: 2 })).toEqual({ output: 8192, outputFrom: "no max_completion_tokens: the default 4096 x n 2" });
  expect(out({ max_tokens: -5 })).toMatchObject({ output: 4096 });
});

test("Anthropic without max_tokens reserves the default; count_tokens reserves nothing", () => {
  expect(reservationOf("anthropic", { model: "m", messages: [] }, 40, true)).toEqual({
    input: 10,
    output: 4096,
    outputFrom: "no max_tokens: the default 4096",
  });
  expect(reservationOf("anthropic", { model: "m", messages: [] }, 40, false)).toMatchObject({ input: 0, output: 0 });
});

test("Responses reserve max_output_tokens and count input_image data URLs; Gemini reserves maxOutputTokens x candidateCount and counts inlineData images", () => {
  const url = `data:image/png;base64,${"B".repeat(40_000)}`;
  const [resp, respBytes] = sized({
    model: "m",
    input: [{ role: "user", content: [{ type: "input_image", image_url: url }] }],
    max_output_tokens: 300,
  });
  expect(reservationOf("openai-responses", resp, respBytes, true)).toEqual({
    input: Math.ceil((respBytes - url.length) / 4) + 1600,
    output: 300,
    outputFrom: "max_output_tokens 300",
  });
  const data = "C".repeat(40_000);
  const [gem, gemBytes] = sized({
    contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data } }] }],
    generationConfig: { maxOutputTokens: 100, candidateCount: 2 },
  });
  expect(reservationOf("gemini", gem, gemBytes, true)).toEqual({
    input: Math.ceil((gemBytes - data.length) / 4) + 1600,
    output: 200,
    outputFrom: "maxOutputTokens 100 x candidateCount 2",
  });
  expect(reservationOf("gemini", { contents: [] }, 40, true)).toMatchObject({
    output: 4096,
    outputFrom: "no maxOutputTokens: the default 4096",
  });
  expect(reservationOf("gemini", { contents: [] }, 40, false)).toMatchObject({ input: 0, output: 0 });
});
