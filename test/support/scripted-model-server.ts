/**
 * A scripted model server on loopback (plain HTTP, random port) that stands in for the model
 * providers so the real coding agents (Claude Code, Codex, Gemini CLI, opencode) run end to end:
 * - Anthropic Messages: `POST /v1/messages` (JSON or SSE), `POST /v1/messages/count_tokens`;
 *   base URL for agents and SDKs = `url`.
 * - OpenAI Responses: `POST /v1/responses` (JSON or SSE); a WebSocket upgrade is refused so Codex
 *   falls back to HTTP. Chat Completions: `POST /v1/chat/completions`. Base URL = `url + "/v1"`.
 * - Gemini: `POST /v1beta/models/{model}:generateContent | :streamGenerateContent?alt=sse | :countTokens`;
 *   base URL = `url`.
 * What it answers is scripted by the prompt: see `scripted-model/script.ts` and {@link writeFilePrompt}.
 * Records every request; {@link ScriptedModelServer.fail} makes every following call fail.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { answerCountTokens, answerMessages } from "./scripted-model/anthropic.js";
import { answerGemini, geminiRoute } from "./scripted-model/gemini.js";
import { answerChat, answerResponses } from "./scripted-model/openai.js";
import { sendJson } from "./scripted-model/sse.js";

export { doneText, okText, parseInstruction, writeFilePrompt } from "./scripted-model/script.js";

export type CredentialKind = "x-api-key" | "bearer" | "x-goog-api-key" | "query-key" | "none";

export interface RecordedRequest {
  /** Path with its query string, as received. */
  path: string;
  method: string;
  /** The body's `model`, or the model in a Gemini path; undefined when neither. */
  model: string | undefined;
  stream: boolean;
  credential: { kind: CredentialKind; value: string | undefined };
  /** The parsed JSON body (undefined when not JSON). */
  body: any;
  /** Epoch milliseconds when the request arrived. */
  at: number;
}

/** What every following call meets: an error status in the API's shape, or a reset connection. */
export type FailureMode = { kind: "status"; status: number } | { kind: "reset" };

export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  port: number;
  requests(): RecordedRequest[];
  /** Fail every following call; `undefined` goes back to answering. */
  fail(mode: FailureMode | undefined): void;
  close(): Promise<void>;
}

export async function startScriptedModelServer(options: { failure?: FailureMode } = {}): Promise<ScriptedModelServer> {
  const recorded: RecordedRequest[] = [];
  let failure = options.failure;
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const body = parseJson(raw);
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      recorded.push(recordOf(req, url, body));
      if (failure) failCall(failure, url.pathname, res);
      else route(req.method ?? "GET", url, body, res);
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  // A WebSocket upgrade (Codex tries `GET /v1/responses` first for some providers): recorded, refused.
  server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    recorded.push(recordOf(req, url, undefined));
    socket.end("HTTP/1.1 426 Upgrade Required\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: () => [...recorded],
    fail: (mode) => {
      failure = mode;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function route(method: string, url: URL, body: any, res: ServerResponse): void {
  const path = url.pathname.replace(/\/+$/, "");
  const gemini = geminiRoute(path);
  if (method !== "POST") sendJson(res, method === "GET" && path === "/v1/responses" ? 405 : 404, notFound(path));
  else if (path === "/v1/messages") answerMessages(body, res);
  else if (path === "/v1/messages/count_tokens") answerCountTokens(body, res);
  else if (path === "/v1/responses") answerResponses(body, res);
  else if (path === "/v1/chat/completions") answerChat(body, res);
  else if (gemini) answerGemini(gemini.method, gemini.model, body, res);
  else sendJson(res, 404, notFound(path));
}

const notFound = (path: string) => ({ error: { type: "not_found_error", code: 404, message: `no route ${path}` } });

function failCall(mode: FailureMode, pathname: string, res: ServerResponse): void {
  if (mode.kind === "reset") {
    res.socket?.destroy();
    return;
  }
  const message = `scripted failure (${mode.status})`;
  if (pathname.startsWith("/v1/messages")) {
    sendJson(res, mode.status, { type: "error", error: { type: errorType(mode.status), message } });
  } else if (geminiRoute(pathname)) {
    sendJson(res, mode.status, { error: { code: mode.status, message, status: geminiStatus(mode.status) } });
  } else {
    sendJson(res, mode.status, { error: { message, type: errorType(mode.status), code: null, param: null } });
  }
}

const errorType = (status: number): string =>
  status === 401 ? "authentication_error" : status === 429 ? "rate_limit_error" : "api_error";
const geminiStatus = (status: number): string =>
  status === 401 ? "UNAUTHENTICATED" : status === 429 ? "RESOURCE_EXHAUSTED" : "INTERNAL";

function recordOf(req: IncomingMessage, url: URL, body: any): RecordedRequest {
  return {
    path: url.pathname + url.search,
    method: req.method ?? "GET",
    model: typeof body?.model === "string" ? body.model : geminiRoute(url.pathname)?.model,
    stream: body?.stream === true || url.pathname.includes(":streamGenerateContent"),
    credential: credentialOf(req, url),
    body,
    at: Date.now(),
  };
}

function credentialOf(req: IncomingMessage, url: URL): RecordedRequest["credential"] {
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const apiKey = header("x-api-key");
  if (apiKey) return { kind: "x-api-key", value: apiKey };
  const bearer = /^Bearer\s+(.+)$/i.exec(header("authorization") ?? "");
  if (bearer) return { kind: "bearer", value: bearer[1] };
  const goog = header("x-goog-api-key");
  if (goog) return { kind: "x-goog-api-key", value: goog };
  const key = url.searchParams.get("key");
  if (key) return { kind: "query-key", value: key };
  return { kind: "none", value: undefined };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", () => resolve(""));
  });
}

function parseJson(raw: string): any {
  try {
    return raw ? JSON.parse(raw) : undefined;
  } catch {
    return undefined;
  }
}
