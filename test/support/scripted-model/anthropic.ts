/** Anthropic Messages API: `POST /v1/messages` (JSON or SSE) and `POST /v1/messages/count_tokens`. */
import type { ServerResponse } from "node:http";
import { type Conversation, decide, type Reply, roughTokens, type Turn } from "./script.js";
import { nextId, sendEvent, sendJson, startSse } from "./sse.js";

export function anthropicConversation(body: any): Conversation {
  const turns: Turn[] = [];
  for (const message of body?.messages ?? []) {
    const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    if (message.role === "assistant") turns.push({ kind: "assistant" });
    else if (message.role !== "user") continue;
    else if (blocks.some((block: any) => block.type === "tool_result")) turns.push({ kind: "tool-result" });
    else turns.push({ kind: "user-text", text: textOf(blocks) });
  }
  const tools = (body?.tools ?? [])
    .filter((tool: any) => typeof tool.name === "string")
    .map((tool: any) => ({ name: tool.name, kind: "function" as const }));
  return { turns, tools };
}

const textOf = (blocks: any[]): string =>
  blocks
    .filter((block) => block.type === "text")
    .map((block) => block.text)
    .join("\n");

export function answerMessages(body: any, res: ServerResponse): void {
  const reply = decide(anthropicConversation(body));
  const message = messageOf(body, reply);
  if (body?.stream) streamMessage(message, res);
  else sendJson(res, 200, message);
}

export function answerCountTokens(body: any, res: ServerResponse): void {
  sendJson(res, 200, { input_tokens: roughTokens(body?.messages) });
}

function messageOf(body: any, reply: Reply) {
  const content =
    reply.kind === "text"
      ? [{ type: "text", text: reply.text }]
      : [{ type: "tool_use", id: nextId("toolu"), name: reply.name, input: reply.input }];
  return {
    id: nextId("msg"),
    type: "message",
    role: "assistant",
    model: body?.model ?? "scripted",
    content,
    stop_reason: reply.kind === "text" ? "end_turn" : "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: roughTokens(body?.messages),
      output_tokens: roughTokens(content),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

function streamMessage(message: ReturnType<typeof messageOf>, res: ServerResponse): void {
  startSse(res);
  const { content, stop_reason, usage } = message;
  const start = { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } };
  sendEvent(res, "message_start", { type: "message_start", message: start });
  content.forEach((block: any, index) => {
    const empty = block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} };
    sendEvent(res, "content_block_start", { type: "content_block_start", index, content_block: empty });
    const delta =
      block.type === "text"
        ? { type: "text_delta", text: block.text }
        : { type: "input_json_delta", partial_json: JSON.stringify(block.input) };
    sendEvent(res, "content_block_delta", { type: "content_block_delta", index, delta });
    sendEvent(res, "content_block_stop", { type: "content_block_stop", index });
  });
  sendEvent(res, "message_delta", {
    type: "message_delta",
    delta: { stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  sendEvent(res, "message_stop", { type: "message_stop" });
  res.end();
}
