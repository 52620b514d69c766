/** OpenAI Responses API (`POST /v1/responses`) and Chat Completions (`POST /v1/chat/completions`). */
import type { ServerResponse } from "node:http";
import { type Conversation, decide, type OfferedTool, type Reply, roughTokens, type Turn } from "./script.js";
import { nextId, sendEvent, sendJson, startSse } from "./sse.js";

// ---- Responses API ----

export function responsesConversation(body: any): Conversation {
  const input = typeof body?.input === "string" ? [{ role: "user", content: body.input }] : (body?.input ?? []);
  const turns: Turn[] = input.map(responsesTurn).filter((turn: Turn | undefined) => turn !== undefined);
  // Codex sends its tools in an `additional_tools` input item, grouped in `namespace` tools.
  const extra = input.filter((item: any) => item.type === "additional_tools").flatMap((item: any) => item.tools ?? []);
  return { turns, tools: flattenTools([...(body?.tools ?? []), ...extra]) };
}

function flattenTools(tools: any[]): OfferedTool[] {
  return tools.flatMap((tool: any): OfferedTool[] => {
    if (tool.type === "namespace") return flattenTools(tool.tools ?? []);
    if (typeof tool.name !== "string") return [];
    return [{ name: tool.name, kind: tool.type === "custom" ? "custom" : "function" }];
  });
}

function responsesTurn(item: any): Turn | undefined {
  if (item.type === "function_call_output" || item.type === "custom_tool_call_output") return { kind: "tool-result" };
  if (item.type === "additional_tools") return undefined;
  if (item.type !== undefined && item.type !== "message") return { kind: "assistant" };
  if (item.role !== "user") return item.role === "assistant" ? { kind: "assistant" } : undefined;
  return { kind: "user-text", text: partsText(item.content) };
}

/** Text of a string or an array of `{type: "input_text"|"text"|..., text}` parts. */
const partsText = (content: any): string =>
  typeof content === "string"
    ? content
    : (content ?? [])
        .filter((part: any) => typeof part.text === "string")
        .map((part: any) => part.text)
        .join("\n");

export function answerResponses(body: any, res: ServerResponse): void {
  const reply = decide(responsesConversation(body));
  const item = outputItem(reply);
  const response = {
    id: nextId("resp"),
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    model: body?.model ?? "scripted",
    status: "completed",
    output: [item],
    usage: {
      input_tokens: roughTokens(body?.input),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: roughTokens(item),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: roughTokens(body?.input) + roughTokens(item),
    },
  };
  if (body?.stream) streamResponse(response, item, res);
  else sendJson(res, 200, { ...response, output_text: reply.kind === "text" ? reply.text : "" });
}

function outputItem(reply: Reply): any {
  if (reply.kind === "text") {
    return {
      type: "message",
      id: nextId("msg"),
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    };
  }
  const id = nextId("fc");
  const call_id = nextId("call");
  if (reply.toolKind === "custom") {
    return { type: "custom_tool_call", id, call_id, name: reply.name, input: String(reply.input), status: "completed" };
  }
  return {
    type: "function_call",
    id,
    call_id,
    name: reply.name,
    arguments: JSON.stringify(reply.input),
    status: "completed",
  };
}

function streamResponse(response: any, item: any, res: ServerResponse): void {
  startSse(res);
  let sequence_number = 0;
  const send = (type: string, data: Record<string, unknown>) =>
    sendEvent(res, type, { type, sequence_number: sequence_number++, ...data });
  const pending = { ...response, status: "in_progress", output: [], usage: null };
  send("response.created", { response: pending });
  send("response.in_progress", { response: pending });
  const output_index = 0;
  if (item.type === "message") {
    const text = item.content[0].text;
    const ids = { item_id: item.id, output_index, content_index: 0 };
    send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } });
    send("response.content_part.added", { ...ids, part: { type: "output_text", text: "", annotations: [] } });
    send("response.output_text.delta", { ...ids, delta: text, logprobs: [] });
    send("response.output_text.done", { ...ids, text, logprobs: [] });
    send("response.content_part.done", { ...ids, part: item.content[0] });
  } else {
    send("response.output_item.added", { output_index, item: { ...item, status: "in_progress" } });
  }
  send("response.output_item.done", { output_index, item });
  send("response.completed", { response });
  res.end();
}

// ---- Chat Completions ----

export function chatConversation(body: any): Conversation {
  const turns: Turn[] = [];
  for (const message of body?.messages ?? []) {
    if (message.role === "tool") turns.push({ kind: "tool-result" });
    else if (message.role === "assistant") turns.push({ kind: "assistant" });
    else if (message.role === "user") turns.push({ kind: "user-text", text: partsText(message.content) });
  }
  const tools = (body?.tools ?? [])
    .filter((tool: any) => typeof tool.function?.name === "string")
    .map((tool: any) => ({ name: tool.function.name, kind: "function" as const }));
  return { turns, tools };
}

export function answerChat(body: any, res: ServerResponse): void {
  const reply = decide(chatConversation(body));
  const message =
    reply.kind === "text"
      ? { role: "assistant", content: reply.text }
      : {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: nextId("call"),
              type: "function",
              function: { name: reply.name, arguments: JSON.stringify(reply.input) },
            },
          ],
        };
  const finish_reason = reply.kind === "text" ? "stop" : "tool_calls";
  const usage = {
    prompt_tokens: roughTokens(body?.messages),
    completion_tokens: roughTokens(message),
    total_tokens: 0,
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  const base = { id: nextId("chatcmpl"), created: Math.floor(Date.now() / 1000), model: body?.model ?? "scripted" };
  if (!body?.stream) {
    sendJson(res, 200, { ...base, object: "chat.completion", choices: [{ index: 0, message, finish_reason }], usage });
    return;
  }
  startSse(res);
  const chunk = (choices: unknown[], extra: object = {}) =>
    sendEvent(res, undefined, { ...base, object: "chat.completion.chunk", choices, ...extra });
  const delta =
    reply.kind === "text"
      ? { role: "assistant", content: reply.text }
      : { role: "assistant", tool_calls: message.tool_calls!.map((call, index) => ({ index, ...call })) };
  chunk([{ index: 0, delta, finish_reason: null }]);
  chunk([{ index: 0, delta: {}, finish_reason }]);
  if (body.stream_options?.include_usage) chunk([], { usage });
  sendEvent(res, undefined, "[DONE]");
  res.end();
}
