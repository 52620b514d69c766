/**
 * A fake model upstream on loopback (plain HTTP, port 0) that speaks the APIs the llm-endpoint
 * sidecar proxies, with the shapes the official SDKs parse:
 * - Anthropic: `POST /v1/messages` (JSON, or SSE when `stream: true`) and `POST /v1/messages/count_tokens`;
 *   base URL = `url`.
 * - OpenAI: `POST /v1/chat/completions` (JSON, or `data:` chunks ending `data: [DONE]`, with a final
 *   usage chunk when `stream_options.include_usage` is true) and `POST /v1/responses` (JSON, or
 *   typed SSE events ending `response.completed`); base URL = `url + "/v1"`.
 * - Gemini: `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent` (SSE with
 *   `alt=sse`, else a JSON array of chunks; usage in the last chunk) and `:countTokens`, also under
 *   /v1; base URL = `url`.
 * Records every request, and has knobs for what the next requests meet: usage numbers, a failure
 * mode (status, reset, hang), a delay before headers, a gate that pauses streams after their
 * first event, and a hold that keeps every answer back until released.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeRequest {
  method: string;
  /** Path with its query string, as received. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (undefined when the body was not JSON). */
  body: any;
  /**
   * Settles when the exchange ends: "finished" when the fake wrote its whole response,
   * "closed-by-client" when the client closed the connection first, "reset" when the fake reset it.
   */
  ended: Promise<"finished" | "closed-by-client" | "reset">;
}

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** Anthropic usage of `input` + `output` tokens, no cache reads or writes. */
export const anthropicUsage = (input: number, output: number): AnthropicUsage => ({
  input_tokens: input,
  output_tokens: output,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
});

export interface OpenAiUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ResponsesUsage {
  input_tokens: number;
  output_tokens: number;
}

export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
}

const GEMINI_PATH = /^\/(?:v1beta|v1)\/models\/[^/:]+:(generateContent|streamGenerateContent|countTokens)$/;

type FakeApi = "anthropic" | "openai" | "responses" | "gemini";

function apiOf(path: string): FakeApi | null {
  if (path === "/v1/chat/completions") return "openai";
  if (path === "/v1/responses") return "responses";
  if (path === "/v1/messages" || path === "/v1/messages/count_tokens") return "anthropic";
  return GEMINI_PATH.test(path) ? "gemini" : null;
}

/**
 * What the following requests meet: a normal answer; an error status in the API's shape (500,
 * 529, ...); the socket destroyed once the body is read; no answer ever (until the client goes);
 * or, for streams, the first event and then nothing (stall) or a reset socket.
 */
export type FakeMode =
  | { kind: "ok" }
  | { kind: "status"; status: number; retryAfter?: string }
  | { kind: "reset" }
  | { kind: "hang" }
  | { kind: "stall-stream" }
  | { kind: "reset-stream" };

/** Holds streams after their first event until released. */
export interface StreamGate {
  /** Resolves when a stream has sent its first event and is waiting on the gate. */
  paused: Promise<void>;
  release(): void;
}

export interface FakeLlmUpstream {
  /** http://127.0.0.1:PORT (the anthropic base URL; openai: url + "/v1"). */
  url: string;
  port: number;
  requests: FakeRequest[];
  /** Usage the answers report; change freely. */
  usage: { anthropic: AnthropicUsage; openai: OpenAiUsage; responses: ResponsesUsage; gemini: GeminiUsage };
  /** The reply text; streams send it word by word, one delta per word. */
  reply: string;
  setMode(mode: FakeMode): void;
  /** Milliseconds to wait before sending headers (0: none). */
  setHeaderDelay(ms: number): void;
  /** Streams started from now on pause after their first event until the gate is released. */
  pauseStreams(): StreamGate;
  /**
   * Requests arriving from now on get no answer (in the mode they met) until `release`: calls
   * stay in flight together for as long as the test needs.
   */
  holdAnswers(): { release(): void };
  /** Resolves with the n-th request (1-based) once it has arrived. */
  request(n: number): Promise<FakeRequest>;
  close(): Promise<void>;
}

export async function startFakeLlmUpstream(): Promise<FakeLlmUpstream> {
  const requests: FakeRequest[] = [];
  const waiters: Array<{ n: number; resolve: (r: FakeRequest) => void }> = [];
  let mode: FakeMode = { kind: "ok" };
  let headerDelayMs = 0;
  let gate: { paused: () => void; released: Promise<void> } | null = null;
  let hold: Promise<void> | null = null;
  let seq = 0;

  const fake: FakeLlmUpstream = {
    url: "",
    port: 0,
    requests,
    usage: {
      anthropic: { input_tokens: 25, output_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      openai: { prompt_tokens: 19, completion_tokens: 5 },
      responses: { input_tokens: 23, output_tokens: 6 },
      gemini: { promptTokenCount: 29, candidatesTokenCount: 8 },
    },
    reply: "fake reply from upstream",
    setMode: (m) => {
      mode = m;
    },
    setHeaderDelay: (ms) => {
      headerDelayMs = ms;
    },
    pauseStreams() {
      let paused!: () => void;
      let release!: () => void;
      const pausedP = new Promise<void>((r) => (paused = r));
      const released = new Promise<void>((r) => (release = r));
      gate = { paused, released };
      return {
        paused: pausedP,
        release: () => {
          gate = null;
          release();
        },
      };
    },
    holdAnswers() {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      return {
        release: () => {
          hold = null;
          release();
        },
      };
    },
    request(n) {
      const have = requests[n - 1];
      if (have) return Promise.resolve(have);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        body = undefined;
      }
      let settle!: (v: "finished" | "closed-by-client" | "reset") => void;
      const ended = new Promise<"finished" | "closed-by-client" | "reset">((r) => (settle = r));
      res.on("close", () => settle(res.writableFinished ? "finished" : "closed-by-client"));
      const rec: FakeRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: { ...req.headers },
        body,
        ended,
      };
      requests.push(rec);
      for (const w of waiters.splice(0)) {
        if (requests.length >= w.n) w.resolve(requests[w.n - 1]!);
        else waiters.push(w);
      }
      void answer(req, res, rec, () => settle("reset"));
    });
  });

  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    rec: FakeRequest,
    onReset: () => void,
  ): Promise<void> {
    const m = mode;
    if (hold) await hold;
    if (m.kind === "reset") {
      onReset();
      req.socket.destroy();
      return;
    }
    if (m.kind === "hang") return;
    if (headerDelayMs > 0) await new Promise((r) => setTimeout(r, headerDelayMs));
    const [path = "", query = ""] = (req.url ?? "").split("?");
    const api = apiOf(path);
    if (req.method !== "POST" || api === null) {
      json(res, 404, { error: { message: `fake upstream: no ${req.method} ${path}` } });
      return;
    }
    if (m.kind === "status") {
      const headers: Record<string, string> = m.retryAfter ? { "retry-after": m.retryAfter } : {};
      if (api === "anthropic") {
        const type = m.status === 529 ? "overloaded_error" : m.status === 429 ? "rate_limit_error" : "api_error";
        json(res, m.status, { type: "error", error: { type, message: `fake upstream answers ${m.status}` } }, headers);
      } else if (api === "gemini") {
        const error = { code: m.status, message: `fake upstream answers ${m.status}`, status: "INTERNAL" };
        json(res, m.status, { error }, headers);
      } else {
        json(
          res,
          m.status,
          { error: { message: `fake upstream answers ${m.status}`, type: "server_error", param: null, code: null } },
          headers,
        );
      }
      return;
    }
    const body = rec.body ?? {};
    const id = ++seq;
    if (path === "/v1/messages/count_tokens") {
      json(res, 200, { input_tokens: fake.usage.anthropic.input_tokens });
      return;
    }
    const method = GEMINI_PATH.exec(path)?.[1];
    if (method === "countTokens") {
      json(res, 200, { totalTokens: fake.usage.gemini.promptTokenCount });
      return;
    }
    const model = api === "gemini" ? decodeURIComponent(path.split("/")[3]!.split(":")[0]!) : body.model;
    const events = EVENTS[api](model, body, id);
    const streams = method ? method === "streamGenerateContent" : body.stream === true;
    if (!streams || (method && new URLSearchParams(query).get("alt") !== "sse")) {
      json(res, 200, method && streams ? geminiChunks(model, id) : ANSWERS[api](model, body, id));
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-fake-request-id": String(id),
    });
    const held = gate;
    for (let i = 0; i < events.length; i++) {
      if (res.destroyed) return;
      if (i === 0 && m.kind === "reset-stream") {
        // Once the first event is on the wire (a destroy would discard it unsent).
        res.write(events[i], () => {
          onReset();
          res.socket?.destroy();
        });
        return;
      }
      res.write(events[i]);
      if (i === 0 && m.kind === "stall-stream") return;
      if (i === 0 && held) {
        held.paused();
        await held.released;
      }
    }
    res.end();
  }

  function anthropicMessage(model: string, _body: unknown, id: number) {
    return {
      id: `msg_fake_${id}`,
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text: fake.reply }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { ...fake.usage.anthropic },
    };
  }

  function anthropicEvents(model: string, body: unknown, id: number): string[] {
    const u = fake.usage.anthropic;
    const sse = (data: { type: string; [k: string]: unknown }) =>
      `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`;
    const start = {
      ...anthropicMessage(model, body, id),
      content: [],
      stop_reason: null,
      usage: { ...u, output_tokens: 1 },
    };
    return [
      sse({ type: "message_start", message: start }),
      sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      sse({ type: "ping" }),
      ...words(fake.reply).map((text) =>
        sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }),
      ),
      sse({ type: "content_block_stop", index: 0 }),
      sse({
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: u.output_tokens },
      }),
      sse({ type: "message_stop" }),
    ];
  }

  function openaiCompletion(model: string, _body: unknown, id: number) {
    const u = fake.usage.openai;
    return {
      id: `chatcmpl-fake-${id}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: fake.reply, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        total_tokens: u.prompt_tokens + u.completion_tokens,
      },
    };
  }

  function openaiEvents(model: string, body: any, id: number): string[] {
    const u = fake.usage.openai;
    const withUsage = body.stream_options?.include_usage === true;
    const base = {
      id: `chatcmpl-fake-${id}`,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model,
    };
    const chunk = (delta: object, finish: string | null) => ({
      ...base,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(withUsage ? { usage: null } : {}),
    });
    const data = (o: object | string) => `data: ${typeof o === "string" ? o : JSON.stringify(o)}\n\n`;
    return [
      data(chunk({ role: "assistant", content: "", refusal: null }, null)),
      ...words(fake.reply).map((w) => data(chunk({ content: w }, null))),
      data(chunk({}, "stop")),
      ...(withUsage
        ? [
            data({
              ...base,
              choices: [],
              usage: {
                prompt_tokens: u.prompt_tokens,
                completion_tokens: u.completion_tokens,
                total_tokens: u.prompt_tokens + u.completion_tokens,
              },
            }),
          ]
        : []),
      data("[DONE]"),
    ];
  }

  /** A Responses API response object: in progress (no output, no usage) or completed. */
  function response(model: string, id: number, done: boolean) {
    const u = fake.usage.responses;
    return {
      id: `resp_fake_${id}`,
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: done ? "completed" : "in_progress",
      model,
      output: done ? [responseMessage(id, "completed")] : [],
      parallel_tool_calls: true,
      tool_choice: "auto",
      tools: [],
      usage: done
        ? {
            input_tokens: u.input_tokens,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: u.output_tokens,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: u.input_tokens + u.output_tokens,
          }
        : null,
    };
  }

  function responseMessage(id: number, status: string) {
    const content = status === "completed" ? [{ type: "output_text", text: fake.reply, annotations: [] }] : [];
    return { id: `msg_fake_${id}`, type: "message", status, role: "assistant", content };
  }

  function responsesEvents(model: string, _body: unknown, id: number): string[] {
    let seq = 0;
    const sse = (type: string, fields: object) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`;
    const item = { item_id: `msg_fake_${id}`, output_index: 0 };
    const part = { ...item, content_index: 0 };
    const text = { type: "output_text", text: fake.reply, annotations: [] };
    return [
      sse("response.created", { response: response(model, id, false) }),
      sse("response.in_progress", { response: response(model, id, false) }),
      sse("response.output_item.added", { output_index: 0, item: responseMessage(id, "in_progress") }),
      sse("response.content_part.added", { ...part, part: { ...text, text: "" } }),
      ...words(fake.reply).map((delta) => sse("response.output_text.delta", { ...part, delta, logprobs: [] })),
      sse("response.output_text.done", { ...part, text: fake.reply, logprobs: [] }),
      sse("response.content_part.done", { ...part, part: text }),
      sse("response.output_item.done", { output_index: 0, item: responseMessage(id, "completed") }),
      sse("response.completed", { response: response(model, id, true) }),
    ];
  }

  /** One generateContent chunk of `text`; the last (finished) carries the whole usage, earlier ones only the prompt's. */
  function geminiChunk(model: string, id: number, text: string, last: boolean) {
    const u = fake.usage.gemini;
    return {
      candidates: [{ content: { role: "model", parts: [{ text }] }, index: 0, ...(last && { finishReason: "STOP" }) }],
      usageMetadata: last
        ? { ...u, totalTokenCount: u.promptTokenCount + u.candidatesTokenCount }
        : { promptTokenCount: u.promptTokenCount, totalTokenCount: u.promptTokenCount },
      modelVersion: model,
      responseId: `gemini-fake-${id}`,
    };
  }

  function geminiChunks(model: string, id: number) {
    const ws = words(fake.reply);
    return ws.map((w, i) => geminiChunk(model, id, w, i === ws.length - 1));
  }

  /** Gemini's SSE separates events with CRLF pairs. */
  const geminiEvents = (model: string, _body: unknown, id: number): string[] =>
    geminiChunks(model, id).map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`);

  const ANSWERS: Record<FakeApi, (model: string, body: any, id: number) => unknown> = {
    anthropic: anthropicMessage,
    openai: openaiCompletion,
    responses: (model, _body, id) => response(model, id, true),
    gemini: (model, _body, id) => geminiChunk(model, id, fake.reply, true),
  };
  const EVENTS: Record<FakeApi, (model: string, body: any, id: number) => string[]> = {
    anthropic: anthropicEvents,
    openai: openaiEvents,
    responses: responsesEvents,
    gemini: geminiEvents,
  };

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.port = (server.address() as AddressInfo).port;
  fake.url = `http://127.0.0.1:${fake.port}`;
  return fake;
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** "a b c" -> ["a ", "b ", "c"]: the pieces joined give the text back. */
function words(text: string): string[] {
  return text.split(/(?<= )/);
}
