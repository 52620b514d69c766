/**
 * The built sidecar in front of the fake upstream, called the way OpenAI Codex (the Responses API,
 * through the official openai SDK, after a WebSocket attempt) and Gemini CLI (@google/genai's
 * requests: x-goog-api-key or ?key=, alt=sse streams) call it: the route's key injected and the
 * session token never forwarded, the upstream path, usage recorded, refusals in each API's shape.
 */
import { connect } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RouteSpec } from "../../../../core/llm-endpoint/protocol.js";
import { startFakeLlmUpstream, type FakeLlmUpstream } from "../../../support/fake-llm-upstream.js";
import { startSidecar, type TestSidecar } from "../../../support/llm-sidecar.js";

const OAI_KEY = "sk-openai-upstream-secret-r1";
const GEM_KEY = "AIza-gemini-upstream-secret-g1";
const TOKEN = "svc-llm-session-token-apis";
const BLOCKED = "svc-llm-session-token-blocked";

let fake: FakeLlmUpstream;
let sc: TestSidecar;
let openai: OpenAI;

function routes(url: string): RouteSpec[] {
  return [
    {
      name: "openai",
      provider: "openai",
      baseUrl: `${url}/v1`,
      models: ["gpt-*"],
      key: { kind: "apiKey", value: OAI_KEY, from: "test" },
    },
    { name: "gem-keyless", provider: "gemini", baseUrl: url, models: ["gemini-keyless-*"], keyFrom: "gemini" },
    {
      name: "gemini",
      provider: "gemini",
      baseUrl: url,
      models: ["gemini-*"],
      key: { kind: "apiKey", value: GEM_KEY, from: "test" },
    },
  ];
}

beforeAll(async () => {
  fake = await startFakeLlmUpstream();
  sc = await startSidecar({ routes: routes(fake.url), roles: [{ role: "gem.fast", model: "gemini-2.5-flash" }] });
  sc.grant(TOKEN, "sess-apis", { runId: "run-apis" });
  sc.grant(BLOCKED, "sess-blocked");
  sc.block("sess-blocked", "context hard stop");
  await sc.sync();
  openai = new OpenAI({ baseURL: `${sc.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
});

afterAll(async () => {
  await sc?.stop();
  await fake?.close();
});

/** The next call record: every earlier call's record is in once a stats round trip is. */
const nextCall = () => sc.nextCall();

/** Neither the session token nor anything else of the client's credentials reached the upstream. */
const noToken = (seen: { path: string; headers: object }) => {
  expect(seen.path).not.toContain(TOKEN);
  expect(JSON.stringify(seen.headers)).not.toContain(TOKEN);
};

describe("OpenAI Responses API", () => {
  test("a call through the openai SDK reaches /v1/responses with the route's key and is recorded with its usage", async () => {
    fake.usage.responses = { input_tokens: 41, output_tokens: 9 };
    const call = await nextCall();
    const r = await openai.responses.create({ model: "gpt-test", input: "hi", instructions: "be brief" });
    expect(r.output_text).toBe(fake.reply);
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1/responses");
    expect(seen.headers.authorization).toBe(`Bearer ${OAI_KEY}`);
    noToken(seen);
    expect(seen.body).toEqual({ model: "gpt-test", input: "hi", instructions: "be brief" });
    const rec = await call();
    expect(rec).toMatchObject({
      sessionId: "sess-apis",
      runId: "run-apis",
      api: "openai",
      path: "/v1/responses",
      route: "openai",
      model: "gpt-test",
      stream: false,
      status: 200,
      inputTokens: 41,
      outputTokens: 9,
    });
    expect(JSON.stringify(rec)).not.toContain(OAI_KEY);
  });

  test("a stream passes its typed events to the SDK unchanged (no stream_options added) and is counted from response.completed", async () => {
    fake.usage.responses = { input_tokens: 52, output_tokens: 11 };
    const call = await nextCall();
    const stream = await openai.responses.create({
      model: "gpt-test",
      input: [{ role: "user", content: [{ type: "input_text", text: "hi" }] }],
      stream: true,
    });
    const types: string[] = [];
    let text = "";
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "response.output_text.delta") text += e.delta;
    }
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe(fake.reply);
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1/responses");
    expect(seen.body.stream_options).toBeUndefined();
    expect(seen.headers.authorization).toBe(`Bearer ${OAI_KEY}`);
    noToken(seen);
    expect(await call()).toMatchObject({ path: "/v1/responses", stream: true, inputTokens: 52, outputTokens: 11 });
  });

  test("refusals come in OpenAI's shape: no input, an unknown model, a blocked session", async () => {
    const noInput = await fetch(`${sc.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ model: "gpt-test", messages: [] }),
    });
    expect(noInput.status).toBe(400);
    expect(await noInput.json()).toMatchObject({ error: { type: "invalid_request_error", param: "input" } });
    const unknown = await openai.responses.create({ model: "nope", input: "hi" }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown).toMatchObject({ code: "model_not_found" });
    const blocked = new OpenAI({ baseURL: `${sc.url}/v1`, apiKey: BLOCKED, maxRetries: 0 });
    const err = await blocked.responses.create({ model: "gpt-test", input: "hi" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(err).toMatchObject({ code: "session_blocked" });
  });

  test("a WebSocket upgrade on GET /v1/responses is refused 426 and closed; the sidecar keeps serving", async () => {
    const call = await nextCall();
    const answer = await new Promise<string>((resolve, reject) => {
      const s = connect(sc.port, "127.0.0.1", () =>
        s.write(
          "GET /v1/responses HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: Upgrade\r\nupgrade: websocket\r\n" +
            `sec-websocket-version: 13\r\nsec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==\r\nauthorization: Bearer ${TOKEN}\r\n\r\n`,
        ),
      );
      let got = "";
      s.on("data", (d) => (got += d.toString("utf8")));
      s.on("close", () => resolve(got));
      s.on("error", reject);
    });
    const [head, body] = answer.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 426 /);
    expect(head!.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(body!)).toMatchObject({
      error: { type: "invalid_request_error", code: "websocket_not_supported" },
    });
    expect(answer).not.toContain(TOKEN);
    expect(await call()).toMatchObject({ path: "/v1/responses", status: 426, error: "websocket upgrade refused" });
    const r = await openai.responses.create({ model: "gpt-test", input: "after" });
    expect(r.output_text).toBe(fake.reply);
  });
});

describe("Gemini API", () => {
  const gemini = (path: string, body: unknown, headers: Record<string, string> = { "x-goog-api-key": TOKEN }) =>
    fetch(`${sc.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-goog-api-client": "google-genai-sdk/1.0.0", ...headers },
      body: JSON.stringify(body),
    });
  const contents = [{ role: "user", parts: [{ text: "hi" }] }];

  test("generateContent with x-goog-api-key reaches the upstream with the route's key as x-goog-api-key, and is recorded", async () => {
    fake.usage.gemini = { promptTokenCount: 33, candidatesTokenCount: 7 };
    const call = await nextCall();
    const res = await gemini("/v1beta/models/gemini-2.5-pro:generateContent", { contents });
    expect(res.status).toBe(200);
    const answer: any = await res.json();
    expect(answer.candidates[0].content.parts[0].text).toBe(fake.reply);
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1beta/models/gemini-2.5-pro:generateContent");
    expect(seen.headers["x-goog-api-key"]).toBe(GEM_KEY);
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers["x-goog-api-client"]).toBe("google-genai-sdk/1.0.0");
    noToken(seen);
    expect(seen.body).toEqual({ contents });
    const rec = await call();
    expect(rec).toMatchObject({
      sessionId: "sess-apis",
      api: "gemini",
      path: "/v1beta/models/gemini-2.5-pro:generateContent",
      route: "gemini",
      model: "gemini-2.5-pro",
      stream: false,
      status: 200,
      inputTokens: 33,
      outputTokens: 7,
    });
    expect(JSON.stringify(rec)).not.toContain(GEM_KEY);
  });

  test("streamGenerateContent?alt=sse with the token as ?key=: the key leaves the URL, the SSE chunks pass, the last one's usage counts", async () => {
    fake.usage.gemini = { promptTokenCount: 44, candidatesTokenCount: 12 };
    const call = await nextCall();
    const res = await gemini(
      `/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse&key=${TOKEN}`,
      { contents },
      {},
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const chunks = (await res.text())
      .split("\r\n\r\n")
      .filter((e) => e.startsWith("data: "))
      .map((e) => JSON.parse(e.slice(6)));
    expect(chunks.map((c) => c.candidates[0].content.parts[0].text).join("")).toBe(fake.reply);
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
    expect(seen.headers["x-goog-api-key"]).toBe(GEM_KEY);
    noToken(seen);
    const rec = await call();
    expect(rec).toMatchObject({ api: "gemini", stream: true, status: 200, inputTokens: 44, outputTokens: 12 });
    expect(JSON.stringify(rec)).not.toContain(TOKEN);
    expect(rec.firstByteMs).toBeGreaterThanOrEqual(0);
  });

  test("countTokens is forwarded and uses no tokens; a role in the path (/v1) is sent upstream as its model", async () => {
    const count = await nextCall();
    const res = await gemini("/v1beta/models/gemini-2.5-pro:countTokens", { contents });
    expect(await res.json()).toEqual({ totalTokens: fake.usage.gemini.promptTokenCount });
    expect(await count()).toMatchObject({ api: "gemini", inputTokens: 0, outputTokens: 0, status: 200 });
    const role = await nextCall();
    const r = await gemini("/v1/models/gem.fast:generateContent", { contents });
    expect(r.status).toBe(200);
    expect(fake.requests.at(-1)!.path).toBe("/v1/models/gemini-2.5-flash:generateContent");
    expect(await role()).toMatchObject({ model: "gemini-2.5-flash", requested: "gem.fast", route: "gemini" });
  });

  test("refusals come in Gemini's shape {error: {code, message, status}}, and nothing reaches the upstream", async () => {
    const before = fake.requests.length;
    const cases: Array<[Response, number, string]> = [
      [
        await gemini("/v1beta/models/gemini-2.5-pro:generateContent", { contents }, { "x-goog-api-key": "nope" }),
        401,
        "UNAUTHENTICATED",
      ],
      [await gemini("/v1beta/models/gemini-2.5-pro:generateContent", { prompt: "hi" }), 400, "INVALID_ARGUMENT"],
      [await gemini("/v1beta/models/unknown-model:generateContent", { contents }), 404, "NOT_FOUND"],
      [await gemini("/v1beta/models/gemini-keyless-1:generateContent", { contents }), 401, "UNAUTHENTICATED"],
      [
        await gemini("/v1beta/models/gemini-2.5-pro:generateContent", { contents }, { "x-goog-api-key": BLOCKED }),
        403,
        "PERMISSION_DENIED",
      ],
      [await gemini("/v1beta/models/gemini-2.5-pro:embedContent", { contents }), 404, "NOT_FOUND"],
    ];
    for (const [res, code, status] of cases) {
      expect(res.status).toBe(code);
      const body: any = await res.json();
      expect(body).toEqual({ error: { code, message: expect.stringContaining("llm-endpoint"), status } });
      expect(body.error.message).not.toContain(TOKEN);
    }
    expect(fake.requests.length).toBe(before);
    const get = await fetch(`${sc.url}/v1beta/models/gemini-2.5-pro:generateContent`, {
      headers: { "x-goog-api-key": TOKEN },
    });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ error: { code: 405, status: "UNIMPLEMENTED" } });
  });
});
