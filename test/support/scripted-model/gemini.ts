/**
 * Gemini API: `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse` and
 * `:countTokens`.
 */
import type { ServerResponse } from "node:http";
import { type Conversation, decide, type Reply, roughTokens, type Turn, valueForSchema } from "./script.js";
import { sendEvent, sendJson, startSse } from "./sse.js";

/** `/v1beta/models/gemini-2.5-pro:streamGenerateContent` → model and method. */
export function geminiRoute(pathname: string): { model: string; method: string } | undefined {
  const match = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):([A-Za-z]+)$/.exec(pathname);
  return match ? { model: decodeURIComponent(match[1]!), method: match[2]! } : undefined;
}

export function geminiConversation(body: any): Conversation {
  const turns: Turn[] = [];
  for (const content of body?.contents ?? []) {
    const parts: any[] = content.parts ?? [];
    if (content.role === "model") turns.push({ kind: "assistant" });
    else if (parts.some((part) => part.functionResponse)) turns.push({ kind: "tool-result" });
    else {
      const text = parts
        .filter((part) => typeof part.text === "string")
        .map((part) => part.text)
        .join("\n");
      turns.push({ kind: "user-text", text });
    }
  }
  const tools = (body?.tools ?? [])
    .flatMap((tool: any) => tool.functionDeclarations ?? [])
    .map((declaration: any) => ({ name: declaration.name, kind: "function" as const }));
  return { turns, tools };
}

export function answerGemini(method: string, model: string, body: any, res: ServerResponse): void {
  if (method === "countTokens") {
    sendJson(res, 200, { totalTokens: roughTokens(body?.contents ?? body?.generateContentRequest) });
    return;
  }
  const config = body?.generationConfig ?? {};
  const reply: Reply =
    config.responseMimeType === "application/json"
      ? { kind: "text", text: JSON.stringify(valueForSchema(config.responseJsonSchema ?? config.responseSchema)) }
      : decide(geminiConversation(body));
  const answer = geminiAnswer(model, body, reply);
  if (method !== "streamGenerateContent") {
    sendJson(res, 200, answer);
    return;
  }
  startSse(res);
  sendEvent(res, undefined, answer);
  res.end();
}

function geminiAnswer(model: string, body: any, reply: Reply) {
  const part = reply.kind === "text" ? { text: reply.text } : { functionCall: { name: reply.name, args: reply.input } };
  const promptTokenCount = roughTokens(body?.contents);
  const candidatesTokenCount = roughTokens(part);
  return {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount, candidatesTokenCount, totalTokenCount: promptTokenCount + candidatesTokenCount },
    modelVersion: model,
  };
}
