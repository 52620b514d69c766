/**
 * Budgets and limits in the built sidecar, seen through the SDKs: each refuses the call past its
 * line with the status and error class the SDK knows (403 PermissionDeniedError for a budget,
 * 429 RateLimitError with retry-after for rate and concurrency), names the budget key, and is
 * reported as a refusal and a call record. A block refuses with its reason.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, expect, test } from "vitest";
import { anthropicUsage, startFakeLlmUpstream, type FakeLlmUpstream } from "../../../support/fake-llm-upstream.js";
import { startSidecar, type TestSidecar } from "../../../support/llm-sidecar.js";

let fake: FakeLlmUpstream;
let sc: TestSidecar;
let session = 0;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  fake = await startFakeLlmUpstream();
  fake.usage.anthropic = anthropicUsage(25, 7);
  sc = await startSidecar({
    routes: [
      {
        name: "anthropic",
        provider: "anthropic",
        baseUrl: fake.url,
        models: ["claude-*"],
        key: { kind: "apiKey", value: "sk-ant-x", from: "test" },
      },
      {
        name: "openai",
        provider: "openai",
        baseUrl: `${fake.url}/v1`,
        models: ["gpt-*"],
        key: { kind: "apiKey", value: "sk-oai-x", from: "test" },
      },
    ],
  });
});

afterAll(async () => {
  await sc?.stop();
  await fake?.close();
});

beforeEach(() => {
  session++;
});

/** A fresh session (its own token) with SDK clients, after the sidecar has the grant. */
async function newSession(opts: { runId?: string; used?: { sessionTokens: number; runTokens: number } } = {}) {
  const token = `tok-limits-${session}-${Math.random().toString(36).slice(2)}`;
  const sessionId = `sess-limits-${session}-${token.slice(-4)}`;
  sc.grant(token, sessionId, opts);
  await sc.sync();
  return {
    sessionId,
    anthropic: new Anthropic({ baseURL: sc.url, apiKey: token, maxRetries: 0 }),
    openai: new OpenAI({ baseURL: `${sc.url}/v1`, apiKey: token, maxRetries: 0 }),
  };
}

const ask = (c: Anthropic) =>
  c.messages.create({ model: "claude-test", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
const chat = (c: OpenAI) =>
  c.chat.completions.create({ model: "gpt-test", messages: [{ role: "user", content: "hi" }] });
const failure = <T>(p: Promise<T>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & { status?: number; headers?: Headers; code?: string; type?: string },
  );

/** Waits for the refusal of this session that comes next. */
async function refusalOf(sessionId: string) {
  for (let n = 1; ; n++) {
    const r = await sc.refusal(n);
    if (r.sessionId === sessionId) return r;
  }
}

async function configure(
  budgets: Parameters<TestSidecar["configure"]>[0]["budgets"],
  day = { date: today, tokens: 0 },
) {
  sc.configure({ budgets, day });
  await sc.sync();
}

test("sessionTokens: a call whose reservation fits runs (and may end past the line by its input underestimate); the next is a 403 naming the budget", async () => {
  await configure({ sessionTokens: 62 });
  const s = await newSession();
  await ask(s.anthropic); // 32
  await ask(s.anthropic); // 64: admitted at 32 + its reservation 29 (21 estimated in + max_tokens 8) <= 62
  const err = await failure(ask(s.anthropic));
  expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
  expect(err!.message).toContain("llmEndpoint.budgets.sessionTokens");
  expect(err!.message).toContain("64");
  expect(err!.message).toContain("62");
  expect(await refusalOf(s.sessionId)).toMatchObject({ reason: "session-budget", status: 403 });
  await sc.sync();
  const recs = sc.calls.filter((c) => c.sessionId === s.sessionId);
  expect(recs.map((c) => c.status)).toEqual([200, 200, 403]);
  // another session is not affected
  await ask((await newSession()).anthropic);
});

test("sessionTokens counts from the grant's totals (a restart); OpenAI gets insufficient_quota", async () => {
  await configure({ sessionTokens: 60 });
  const s = await newSession({ used: { sessionTokens: 60, runTokens: 0 } });
  const err = await failure(chat(s.openai));
  expect(err).toBeInstanceOf(OpenAI.PermissionDeniedError);
  expect(err).toMatchObject({ status: 403, type: "insufficient_quota", code: "session_token_budget_exhausted" });
  expect(err!.message).toContain("llmEndpoint.budgets.sessionTokens");
});

test("runTokens: every session of the run is refused once the run is past its line", async () => {
  await configure({ runTokens: 120 });
  const runId = `run-${session}`;
  const a = await newSession({ runId, used: { sessionTokens: 0, runTokens: 90 } });
  const b = await newSession({ runId, used: { sessionTokens: 0, runTokens: 90 } });
  await ask(a.anthropic); // admitted at 90 + 29 reserved <= 120; run: 90 + 32 = 122
  const err = await failure(ask(b.anthropic));
  expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
  expect(err!.message).toContain("llmEndpoint.budgets.runTokens");
  expect(err!.message).toContain("122");
  expect(await refusalOf(b.sessionId)).toMatchObject({ reason: "run-budget", runId });
});

test("dayTokens: counted from configure's day; a new UTC day starts from zero", async () => {
  await configure({ dayTokens: 500 }, { date: today, tokens: 500 });
  const s = await newSession();
  const err = await failure(ask(s.anthropic));
  expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
  expect(err!.message).toContain("llmEndpoint.budgets.dayTokens");
  expect(await refusalOf(s.sessionId)).toMatchObject({ reason: "day-budget" });
  await configure({ dayTokens: 500 }, { date: "2001-02-03", tokens: 10_000 });
  await ask(s.anthropic);
});

test("requestsPerMinute: the call past the line is a 429 with retry-after, in both SDKs", async () => {
  await configure({ requestsPerMinute: 2 });
  const s = await newSession();
  await ask(s.anthropic);
  await chat(s.openai);
  const err = await failure(ask(s.anthropic));
  expect(err).toBeInstanceOf(Anthropic.RateLimitError);
  const retryAfter = Number(err!.headers!.get("retry-after"));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(err!.message).toContain("llmEndpoint.budgets.requestsPerMinute");
  const oerr = await failure(chat(s.openai));
  expect(oerr).toBeInstanceOf(OpenAI.RateLimitError);
  expect(oerr).toMatchObject({ code: "rate_limit_exceeded" });
  expect(Number(oerr!.headers!.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(await refusalOf(s.sessionId)).toMatchObject({ reason: "rate", status: 429 });
});

test("concurrentCalls: a call while the session's limit is in flight is a 429; after it ends, calls run", async () => {
  await configure({ concurrentCalls: 1 });
  const s = await newSession();
  const gate = fake.pauseStreams();
  const stream = await s.anthropic.messages.create({
    model: "claude-test",
    max_tokens: 8,
    messages: [{ role: "user", content: "hi" }],
    stream: true,
  });
  await gate.paused;
  const err = await failure(ask(s.anthropic));
  expect(err).toBeInstanceOf(Anthropic.RateLimitError);
  expect(err!.headers!.get("retry-after")).toBe("1");
  expect(err!.message).toContain("llmEndpoint.budgets.concurrentCalls");
  expect(await refusalOf(s.sessionId)).toMatchObject({ reason: "concurrency" });
  gate.release();
  for await (const _ of stream) void _;
  await sc.sync();
  await ask(s.anthropic);
});

test("a blocked session is refused with the reason given", async () => {
  await configure({});
  const s = await newSession();
  await ask(s.anthropic);
  sc.block(s.sessionId, "context hard stop at 97% of the window");
  await sc.sync();
  const err = await failure(ask(s.anthropic));
  expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
  expect(err!.message).toContain("context hard stop at 97% of the window");
  const oerr = await failure(chat(s.openai));
  expect(oerr).toBeInstanceOf(OpenAI.PermissionDeniedError);
  expect(oerr).toMatchObject({ code: "session_blocked" });
  expect(await refusalOf(s.sessionId)).toMatchObject({ reason: "blocked", status: 403 });
});
