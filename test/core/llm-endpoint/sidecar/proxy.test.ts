/**
 * The built sidecar as a child process, called by the official SDKs, in front of the fake
 * upstream: keys injected (and the session token never forwarded), API headers passed, usage
 * recorded, streams unbuffered, routing by model and role, and bad input answered in each API's
 * own error shape.
 */
import Anthropic from "@anthropic-ai/sdk";
import fc from "fast-check";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RouteSpec } from "../../../../core/llm-endpoint/protocol.js";
import { startFakeLlmUpstream, type FakeLlmUpstream } from "../../../support/fake-llm-upstream.js";
import { startSidecar, type TestSidecar } from "../../../support/llm-sidecar.js";

const ANT_KEY = "sk-ant-upstream-secret-1";
const ANT_OAUTH = "ant-oauth-upstream-secret-2";
const OAI_KEY = "sk-openai-upstream-secret-3";
const TOKEN = "svc-llm-session-token-aaaa";
const REVOKED = "svc-llm-session-token-revoked";

let fake: FakeLlmUpstream;
let sc: TestSidecar;
let anthropic: Anthropic;
let openai: OpenAI;

function routes(url: string): RouteSpec[] {
  return [
    {
      name: "oauth",
      provider: "anthropic",
      baseUrl: url,
      models: ["claude-oauth-model"],
      key: { kind: "token", value: ANT_OAUTH, from: "test" },
    },
    {
      name: "anthropic",
      provider: "anthropic",
      baseUrl: url,
      models: ["claude-*"],
      key: { kind: "apiKey", value: ANT_KEY, from: "test" },
    },
    {
      name: "openai",
      provider: "openai",
      baseUrl: `${url}/v1`,
      models: ["gpt-*"],
      key: { kind: "apiKey", value: OAI_KEY, from: "test" },
    },
    { name: "keyless", provider: "anthropic", baseUrl: url, models: ["keyless-*"], keyFrom: "claude-work" },
  ];
}

beforeAll(async () => {
  fake = await startFakeLlmUpstream();
  sc = await startSidecar({
    routes: routes(fake.url),
    roles: [
      { role: "planner", model: "claude-opus-test", route: "anthropic" },
      { role: "coder.fast", model: "gpt-fast" },
    ],
  });
  sc.grant(TOKEN, "sess-1", { runId: "run-1" });
  sc.grant(REVOKED, "sess-2");
  sc.revoke(REVOKED);
  await sc.sync();
  anthropic = new Anthropic({ baseURL: sc.url, apiKey: TOKEN, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${sc.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
});

afterAll(async () => {
  await sc?.stop();
  await fake?.close();
});

const msg = [{ role: "user" as const, content: "hi" }];

/** The next call record: every earlier call's record is in once a stats round trip is. */
const nextCall = () => sc.nextCall();

describe("anthropic", () => {
  test("a call reaches the upstream with the route's key, the API headers, and is recorded with its usage", async () => {
    fake.usage.anthropic = {
      input_tokens: 10,
      output_tokens: 7,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 4,
    };
    const call = await nextCall();
    const m = await anthropic.messages.create(
      { model: "claude-test", max_tokens: 16, messages: msg },
      { headers: { "anthropic-beta": "test-beta-2026" } },
    );
    expect(m.content[0]).toMatchObject({ type: "text", text: fake.reply });
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1/messages");
    expect(seen.headers["x-api-key"]).toBe(ANT_KEY);
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(seen.headers["anthropic-beta"]).toBe("test-beta-2026");
    expect(JSON.stringify(seen.headers)).not.toContain(TOKEN);
    expect(seen.body).toMatchObject({ model: "claude-test", messages: msg });
    const rec = await call();
    expect(rec).toMatchObject({
      sessionId: "sess-1",
      runId: "run-1",
      api: "anthropic",
      path: "/v1/messages",
      route: "anthropic",
      model: "claude-test",
      stream: false,
      status: 200,
      inputTokens: 17,
      outputTokens: 7,
    });
    expect(rec.requested).toBeUndefined();
    expect(rec.latencyMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(rec)).not.toContain(ANT_KEY);
  });

  test("a stream passes event by event: the first reaches the SDK before the upstream sends the rest", async () => {
    fake.usage.anthropic = {
      input_tokens: 30,
      output_tokens: 9,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 2,
    };
    const gate = fake.pauseStreams();
    const call = await nextCall();
    const stream = await anthropic.messages.create({
      model: "claude-test",
      max_tokens: 16,
      messages: msg,
      stream: true,
    });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value?.type).toBe("message_start");
    await gate.paused; // the upstream holds every later event until released
    gate.release();
    let text = "";
    for (let r = await it.next(); !r.done; r = await it.next()) {
      if (r.value.type === "content_block_delta" && r.value.delta.type === "text_delta") text += r.value.delta.text;
    }
    expect(text).toBe(fake.reply);
    const rec = await call();
    expect(rec).toMatchObject({ stream: true, status: 200, inputTokens: 32, outputTokens: 9 });
    expect(rec.firstByteMs).toBeGreaterThanOrEqual(0);
  });

  test("messages.stream() assembles the final message through the sidecar", async () => {
    const final = await anthropic.messages
      .stream({ model: "claude-test", max_tokens: 16, messages: msg })
      .finalMessage();
    expect(final.content[0]).toMatchObject({ type: "text", text: fake.reply });
    expect(final.usage.output_tokens).toBe(fake.usage.anthropic.output_tokens);
  });

  test("count_tokens is forwarded and counts no usage", async () => {
    const call = await nextCall();
    const r = await anthropic.messages.countTokens({ model: "claude-test", messages: msg });
    expect(r.input_tokens).toBe(fake.usage.anthropic.input_tokens);
    expect(fake.requests.at(-1)!.path).toBe("/v1/messages/count_tokens");
    expect(await call()).toMatchObject({
      path: "/v1/messages/count_tokens",
      status: 200,
      inputTokens: 0,
      outputTokens: 0,
    });
  });

  test("a token route sends the key as a bearer; a bearer session token is accepted too", async () => {
    const viaBearer = new Anthropic({ baseURL: sc.url, authToken: TOKEN, apiKey: null, maxRetries: 0 });
    await viaBearer.messages.create({ model: "claude-oauth-model", max_tokens: 16, messages: msg });
    const seen = fake.requests.at(-1)!;
    expect(seen.headers.authorization).toBe(`Bearer ${ANT_OAUTH}`);
    expect(seen.headers["x-api-key"]).toBeUndefined();
  });

  test("a role rewrites the model and picks its route", async () => {
    const call = await nextCall();
    await anthropic.messages.create({ model: "role:planner", max_tokens: 16, messages: msg });
    expect(fake.requests.at(-1)!.body.model).toBe("claude-opus-test");
    expect(await call()).toMatchObject({ route: "anthropic", model: "claude-opus-test", requested: "role:planner" });
  });

  test("a revoked or unknown token is refused with 401, never echoed", async () => {
    const before = fake.requests.length;
    for (const key of [REVOKED, "not-a-token-at-all"]) {
      const client = new Anthropic({ baseURL: sc.url, apiKey: key, maxRetries: 0 });
      const err = await client.messages
        .create({ model: "claude-test", max_tokens: 16, messages: msg })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(JSON.stringify((err as InstanceType<typeof Anthropic.AuthenticationError>).error)).not.toContain(key);
    }
    expect(fake.requests.length).toBe(before);
  });

  test("a route with no key is refused with 401 saying where to set one", async () => {
    const refusals = sc.refusals.length;
    const err = await anthropic.messages
      .create({ model: "keyless-1", max_tokens: 16, messages: msg })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as Error).message).toContain("defaults.adapters.claude-work.auth");
    expect((err as Error).message).toContain("credentials.json llm-endpoint/keyless");
    expect(await sc.refusal(refusals + 1)).toMatchObject({ sessionId: "sess-1", reason: "no-key", status: 401 });
  });

  test("an unknown model is a 404 naming the routes; a model of the other API is a 400 naming its endpoint", async () => {
    const nf = await anthropic.messages
      .create({ model: "mystery-9", max_tokens: 16, messages: msg })
      .catch((e: unknown) => e);
    expect(nf).toBeInstanceOf(Anthropic.NotFoundError);
    expect((nf as Error).message).toContain("mystery-9");
    expect((nf as Error).message).toContain("anthropic (anthropic: claude-*)");
    expect((nf as Error).message).toContain("openai (openai: gpt-*)");
    const wrong = await anthropic.messages
      .create({ model: "gpt-4o", max_tokens: 16, messages: msg })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(Anthropic.BadRequestError);
    expect((wrong as Error).message).toContain("POST /v1/chat/completions");
  });
});

describe("openai", () => {
  test("a call reaches the upstream with the route's key as a bearer and is recorded with its usage", async () => {
    fake.usage.openai = { prompt_tokens: 21, completion_tokens: 6 };
    const call = await nextCall();
    const c = await openai.chat.completions.create({ model: "gpt-test", messages: msg });
    expect(c.choices[0]!.message.content).toBe(fake.reply);
    const seen = fake.requests.at(-1)!;
    expect(seen.path).toBe("/v1/chat/completions");
    expect(seen.headers.authorization).toBe(`Bearer ${OAI_KEY}`);
    expect(JSON.stringify(seen.headers)).not.toContain(TOKEN);
    expect(await call()).toMatchObject({
      api: "openai",
      path: "/v1/chat/completions",
      route: "openai",
      model: "gpt-test",
      stream: false,
      status: 200,
      inputTokens: 21,
      outputTokens: 6,
    });
  });

  test("a stream with include_usage passes unbuffered and its usage chunk reaches the client", async () => {
    fake.usage.openai = { prompt_tokens: 40, completion_tokens: 11 };
    const gate = fake.pauseStreams();
    const call = await nextCall();
    const stream = await openai.chat.completions.create({
      model: "gpt-test",
      messages: msg,
      stream: true,
      stream_options: { include_usage: true },
    });
    const it = stream[Symbol.asyncIterator]();
    const first = await it.next();
    expect(first.value?.choices[0]?.delta.role).toBe("assistant");
    await gate.paused;
    gate.release();
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for (let r = await it.next(); !r.done; r = await it.next()) {
      text += r.value.choices[0]?.delta.content ?? "";
      if (r.value.usage) usage = r.value.usage;
    }
    expect(text).toBe(fake.reply);
    expect(usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 11 });
    expect(await call()).toMatchObject({ stream: true, status: 200, inputTokens: 40, outputTokens: 11 });
  });

  test("a stream without include_usage is still counted, and the client gets no usage chunk", async () => {
    fake.usage.openai = { prompt_tokens: 12, completion_tokens: 3 };
    const call = await nextCall();
    const stream = await openai.chat.completions.create({ model: "role:coder.fast", messages: msg, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.every((c) => c.choices.length === 1 && !c.usage)).toBe(true);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: "gpt-fast", stream_options: { include_usage: true } });
    expect(await call()).toMatchObject({
      model: "gpt-fast",
      requested: "role:coder.fast",
      inputTokens: 12,
      outputTokens: 3,
    });
  });

  test("an unknown model is a 404 in OpenAI's shape naming the routes", async () => {
    const err = await openai.chat.completions.create({ model: "nope", messages: msg }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ code: "model_not_found", param: "model", type: "invalid_request_error" });
    expect((err as Error).message).toContain("openai (openai: gpt-*)");
  });
});

describe("bad input", () => {
  const post = (path: string, body: string, token = TOKEN) =>
    fetch(`${sc.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": token },
      body,
    });

  test("broken JSON, a missing model and missing messages are 400s naming what is wrong, in each API's shape", async () => {
    const a = await post("/v1/messages", "{not json");
    expect(a.status).toBe(400);
    const aBody: any = await a.json();
    expect(aBody).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(aBody.error.message).toContain("not valid JSON");
    const o = await post("/v1/chat/completions", "[1,");
    expect(o.status).toBe(400);
    expect(await o.json()).toMatchObject({
      error: { type: "invalid_request_error", param: "body", message: expect.stringContaining("not valid JSON") },
    });
    const noModel = await post("/v1/messages", JSON.stringify({ messages: [] }));
    expect(noModel.status).toBe(400);
    expect(((await noModel.json()) as any).error.message).toContain("model");
    const noMessages = await post("/v1/chat/completions", JSON.stringify({ model: "gpt-test" }));
    expect(noMessages.status).toBe(400);
    expect(await noMessages.json()).toMatchObject({ error: { param: "messages" } });
    const notObject = await post("/v1/messages", "42");
    expect(notObject.status).toBe(400);
    for (const r of [aBody]) expect(JSON.stringify(r)).not.toMatch(/at .*\.js:\d+/);
  });

  test("an unknown path is a 404 in the shape of the API its path belongs to", async () => {
    const a = await post("/v1/messages/batches", "{}");
    expect(a.status).toBe(404);
    expect(await a.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    const o = await fetch(`${sc.url}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(o.status).toBe(404);
    expect(await o.json()).toMatchObject({ error: { type: "invalid_request_error", code: "unknown_url" } });
  });

  test("property: any JSON body gets a 4xx in the API's shape or is forwarded, never a 5xx", async () => {
    const model = fc.oneof(
      fc.constantFrom("claude-x", "gpt-x", "role:planner", "coder.fast", "keyless-1", "", "zzz"),
      fc.jsonValue(),
    );
    const body = fc.oneof(
      fc.jsonValue(),
      fc.dictionary(fc.string(), fc.jsonValue()),
      fc.record(
        {
          model,
          messages: fc.oneof(fc.array(fc.jsonValue(), { maxLength: 3 }), fc.jsonValue()),
          stream: fc.oneof(fc.boolean(), fc.jsonValue()),
          stream_options: fc.jsonValue(),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("/v1/messages", "/v1/messages/count_tokens", "/v1/chat/completions"),
        body,
        async (path, b) => {
          const before = fake.requests.length;
          const res = await post(path, JSON.stringify(b));
          const text = await res.text();
          expect(res.status).toBeLessThan(500);
          if (res.status >= 400) {
            const parsed = JSON.parse(text);
            if (path.startsWith("/v1/messages"))
              expect(parsed).toMatchObject({
                type: "error",
                error: { type: expect.any(String), message: expect.any(String) },
              });
            else expect(parsed).toMatchObject({ error: { message: expect.any(String), type: expect.any(String) } });
            expect(fake.requests.length).toBe(before);
          } else {
            expect(fake.requests.length).toBe(before + 1);
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
