/**
 * The scripted model server (test/support/scripted-model-server.ts) speaks each API well enough for
 * the official SDKs: a scripted tool-call round trip per API (Anthropic and OpenAI through their
 * SDKs, Gemini through fetch), plain-text side calls, the request record, and the failure modes.
 */
import { request } from "node:http";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  doneText,
  type ScriptedModelServer,
  startScriptedModelServer,
  writeFilePrompt,
} from "../support/scripted-model-server.js";

const PATH = "/tmp/scripted-repo/hello.txt";
const PROMPT = writeFilePrompt(PATH, "hello there");

let server: ScriptedModelServer;
beforeAll(async () => {
  server = await startScriptedModelServer();
});
afterAll(async () => {
  await server.close();
});
afterEach(() => server.fail(undefined));

const anthropic = () => new Anthropic({ baseURL: server.url, apiKey: "sk-ant-test", maxRetries: 0 });
const openai = () => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: "sk-openai-test", maxRetries: 0 });
const lastRequest = () => server.requests().at(-1)!;

describe("writeFilePrompt", () => {
  it("builds the one scripted instruction and refuses what the grammar cannot carry", () => {
    expect(PROMPT).toBe(`write file ${PATH} with text hello there`);
    expect(() => writeFilePrompt("/a b", "x")).toThrow(/whitespace/);
    expect(() => writeFilePrompt("/a", "x\ny")).toThrow(/one line/);
  });
});

describe("Anthropic Messages", () => {
  const tools = [{ name: "Write", input_schema: { type: "object" as const, properties: {} } }];

  it("streams a Write tool call, then the final text once the tool result is in", async () => {
    const first = await anthropic()
      .messages.stream({
        model: "claude-scripted",
        max_tokens: 100,
        tools,
        messages: [{ role: "user", content: PROMPT }],
      })
      .finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content[0];
    if (call?.type !== "tool_use") throw new Error(`expected tool_use, got ${call?.type}`);
    expect(call).toMatchObject({ name: "Write", input: { file_path: PATH, content: "hello there\n" } });
    expect(first.usage.output_tokens).toBeGreaterThan(0);

    const second = await anthropic()
      .messages.stream({
        model: "claude-scripted",
        max_tokens: 100,
        tools,
        messages: [
          { role: "user", content: PROMPT },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "ok" }] },
        ],
      })
      .finalMessage();
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content).toEqual([{ type: "text", text: doneText(PATH) }]);
    expect(lastRequest()).toMatchObject({
      path: "/v1/messages",
      method: "POST",
      model: "claude-scripted",
      stream: true,
      // This SDK (1.14) sends its apiKey as `Authorization: Bearer`; Claude Code sends `x-api-key`.
      credential: { kind: "bearer", value: "sk-ant-test" },
    });
  });

  it("answers side calls (no tools offered) and other prompts with text, without streaming too", async () => {
    const title = await anthropic().messages.create({
      model: "claude-haiku",
      max_tokens: 50,
      messages: [{ role: "user", content: `<session>\n${PROMPT}\n</session>\nWrite a title` }],
    });
    expect(title.content[0]).toMatchObject({ type: "text" });
    expect(JSON.stringify(title.content)).not.toContain("tool_use");
    const other = await anthropic().messages.create({
      model: "claude-haiku",
      max_tokens: 50,
      tools,
      messages: [{ role: "user", content: "say hello please" }],
    });
    expect(other.content).toEqual([{ type: "text", text: "ok: say hello please" }]);
    expect(lastRequest().stream).toBe(false);
    await fetch(`${server.url}/v1/messages/count_tokens`, {
      method: "POST",
      headers: { "x-api-key": "k" },
      body: "{}",
    });
    expect(lastRequest().credential).toEqual({ kind: "x-api-key", value: "k" });
  });

  it("counts tokens", async () => {
    const counted = await anthropic().messages.countTokens({
      model: "claude-scripted",
      messages: [{ role: "user", content: "hi" }],
    });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });
});

describe("OpenAI Responses", () => {
  it("streams a freeform apply_patch call (custom tool), then the final text", async () => {
    const stream = await openai().responses.create({
      model: "gpt-scripted",
      stream: true,
      input: [{ role: "user", content: PROMPT }],
      tools: [{ type: "custom", name: "apply_patch" }],
    });
    const types: string[] = [];
    let completed: any;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.completed") completed = event.response;
    }
    expect(types).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
    ]);
    const call = completed.output[0];
    expect(call).toMatchObject({
      type: "custom_tool_call",
      name: "apply_patch",
      input: `*** Begin Patch\n*** Add File: ${PATH}\n+hello there\n*** End Patch\n`,
    });
    expect(completed.usage.total_tokens).toBeGreaterThan(0);

    const final = await openai().responses.create({
      model: "gpt-scripted",
      input: [
        { role: "user", content: PROMPT },
        { type: "custom_tool_call", call_id: call.call_id, name: "apply_patch", input: call.input },
        { type: "custom_tool_call_output", call_id: call.call_id, output: "Done" },
      ],
      tools: [{ type: "custom", name: "apply_patch" }],
    });
    expect(final.output_text).toBe(doneText(PATH));
    expect(lastRequest()).toMatchObject({ model: "gpt-scripted", stream: false, credential: { kind: "bearer" } });
  });

  it("finds Codex's tools in an additional_tools input item (code mode: a freeform exec tool)", async () => {
    const response = await openai().responses.create({
      model: "gpt-scripted",
      input: [
        {
          type: "additional_tools",
          role: "developer",
          tools: [{ type: "namespace", name: "functions", tools: [{ type: "custom", name: "exec" }] }],
        },
        { role: "user", content: PROMPT },
      ] as any,
    });
    expect(response.output[0]).toMatchObject({ type: "custom_tool_call", name: "exec" });
    expect((response.output[0] as any).input).toContain("await tools.apply_patch(");
  });

  it("streams text deltas and answers a function tool (exec_command) with JSON arguments", async () => {
    const stream = await openai().responses.create({ model: "gpt-scripted", stream: true, input: "say hi" });
    let text = "";
    for await (const event of stream) if (event.type === "response.output_text.delta") text += event.delta;
    expect(text).toBe("ok: say hi");

    const call = await openai().responses.create({
      model: "gpt-scripted",
      input: PROMPT,
      tools: [{ type: "function", name: "exec_command", parameters: {}, strict: false }],
    });
    const item = call.output[0] as any;
    expect(item).toMatchObject({ type: "function_call", name: "exec_command" });
    expect(JSON.parse(item.arguments).cmd).toBe(`printf '%s\\n' 'hello there' > '${PATH}'`);
  });

  it("refuses a WebSocket upgrade on GET /v1/responses", async () => {
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${server.url}/v1/responses`, {
        headers: {
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": "x",
        },
      });
      req.on("response", (res) => resolve(res.statusCode));
      req.on("upgrade", () => reject(new Error("upgraded")));
      req.on("error", reject);
      req.end();
    });
    expect(status).toBe(426);
  });
});

describe("OpenAI Chat Completions", () => {
  const tools = [{ type: "function" as const, function: { name: "write", parameters: {} } }];

  it("streams a tool call, then the final text once the tool message is in", async () => {
    const stream = await openai().chat.completions.create({
      model: "gpt-chat-scripted",
      stream: true,
      stream_options: { include_usage: true },
      tools,
      messages: [{ role: "user", content: PROMPT }],
    });
    let name = "";
    let args = "";
    let id = "";
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        id ||= call.id ?? "";
        name += call.function?.name ?? "";
        args += call.function?.arguments ?? "";
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage ??= chunk.usage ?? undefined;
    }
    expect({ name, input: JSON.parse(args), finish }).toEqual({
      name: "write",
      input: { filePath: PATH, content: "hello there\n" },
      finish: "tool_calls",
    });
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number) });

    const final = await openai().chat.completions.create({
      model: "gpt-chat-scripted",
      tools,
      messages: [
        { role: "user", content: PROMPT },
        { role: "assistant", tool_calls: [{ id, type: "function", function: { name, arguments: args } }] },
        { role: "tool", tool_call_id: id, content: "written" },
      ],
    });
    expect(final.choices[0]?.message.content).toBe(doneText(PATH));
    expect(final.choices[0]?.finish_reason).toBe("stop");
  });
});

describe("Gemini", () => {
  const tools = [{ functionDeclarations: [{ name: "write_file", parameters: { type: "OBJECT" } }] }];
  const gemini = (method: string, body: unknown, query = "") =>
    fetch(`${server.url}/v1beta/models/gemini-scripted:${method}${query}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-key": "gemini-test" },
      body: JSON.stringify(body),
    });
  const geminiJson = async (method: string, body: unknown): Promise<any> => (await gemini(method, body)).json();

  it("streams a write_file functionCall over SSE, then the final text after the functionResponse", async () => {
    const contents = [{ role: "user", parts: [{ text: PROMPT }] }];
    const res = await gemini("streamGenerateContent", { contents, tools }, "?alt=sse");
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const events = (await res.text())
      .split("\n\n")
      .filter((block) => block.startsWith("data: "))
      .map((block) => JSON.parse(block.slice("data: ".length)));
    const part = events[0].candidates[0].content.parts[0];
    expect(part).toEqual({ functionCall: { name: "write_file", args: { file_path: PATH, content: "hello there\n" } } });
    expect(events[0].usageMetadata.totalTokenCount).toBeGreaterThan(0);
    expect(lastRequest()).toMatchObject({
      model: "gemini-scripted",
      stream: true,
      credential: { kind: "x-goog-api-key", value: "gemini-test" },
    });

    const after = [
      ...contents,
      { role: "model", parts: [part] },
      { role: "user", parts: [{ functionResponse: { name: "write_file", response: { output: "ok" } } }] },
    ];
    const final = await geminiJson("generateContent", { contents: after, tools });
    expect(final.candidates[0].content.parts).toEqual([{ text: doneText(PATH) }]);
  });

  it("answers JSON-mode side calls with a value of the schema, and counts tokens", async () => {
    const routed = await geminiJson("generateContent", {
      contents: [{ role: "user", parts: [{ text: PROMPT }] }],
      generationConfig: {
        responseMimeType: "application/json",
        responseJsonSchema: {
          type: "OBJECT",
          properties: { complexity_reasoning: { type: "STRING" }, complexity_score: { type: "INTEGER" } },
        },
      },
    });
    expect(JSON.parse(routed.candidates[0].content.parts[0].text)).toEqual({
      complexity_reasoning: "ok",
      complexity_score: 1,
    });
    const counted = await geminiJson("countTokens", { contents: [{ parts: [{ text: "hi" }] }] });
    expect(counted.totalTokens).toBeGreaterThan(0);
  });

  it("records a key passed in the query string", async () => {
    await fetch(`${server.url}/v1beta/models/gemini-scripted:countTokens?key=q-key`, { method: "POST", body: "{}" });
    expect(lastRequest().credential).toEqual({ kind: "query-key", value: "q-key" });
  });
});

describe("failure modes", () => {
  it("fails every call with the status in each API's error shape, then recovers", async () => {
    server.fail({ kind: "status", status: 401 });
    await expect(
      anthropic().messages.create({ model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({ status: 401, error: { type: "error", error: { type: "authentication_error" } } });
    await expect(openai().responses.create({ model: "m", input: "x" })).rejects.toMatchObject({ status: 401 });
    server.fail({ kind: "status", status: 500 });
    const res = await fetch(`${server.url}/v1beta/models/g:generateContent`, { method: "POST", body: "{}" });
    expect(res.status).toBe(500);
    expect(((await res.json()) as any).error.status).toBe("INTERNAL");
    server.fail(undefined);
    const ok = await openai().chat.completions.create({ model: "m", messages: [{ role: "user", content: "x" }] });
    expect(ok.choices[0]?.message.content).toBe("ok: x");
  });

  it("resets the connection", async () => {
    server.fail({ kind: "reset" });
    await expect(openai().responses.create({ model: "m", input: "x" })).rejects.toThrow(/Connection error/i);
  });

  it("records every request with path, method, model, stream flag, credential and time", async () => {
    const before = Date.now();
    await fetch(`${server.url}/nowhere`, { headers: { authorization: "Bearer b-key" } });
    expect(lastRequest()).toMatchObject({
      path: "/nowhere",
      method: "GET",
      model: undefined,
      stream: false,
      credential: { kind: "bearer", value: "b-key" },
    });
    expect(lastRequest().at).toBeGreaterThanOrEqual(before);
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });
});
