/**
 * Token budgets under concurrency, in the built sidecar called by the SDKs: each call reserves its
 * estimate (a quarter of its body's bytes + its output cap, docs/llm-endpoint.md) when it starts,
 * a call that would take used + reserved past the line is refused, and the reservation gives way
 * to the real usage when the call ends (streams, failures and a client gone included). The
 * upstream holds its answers until every call has arrived or been refused, so the calls truly
 * overlap.
 */
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach, beforeEach, expect, test } from "vitest";
import {
  anthropicUsage,
  startFakeLlmUpstream,
  type FakeLlmUpstream,
  type FakeRequest,
} from "../../../support/fake-llm-upstream.js";
import { startSidecar, type TestSidecar } from "../../../support/llm-sidecar.js";
import { until } from "../../../support/until.js";

const key = { kind: "apiKey" as const, value: "sk-upstream", from: "test" };
let fake: FakeLlmUpstream;
let sc: TestSidecar;

// A fresh sidecar per test: the day's counter is the wall clock's and only ever grows.
beforeEach(async () => {
  fake = await startFakeLlmUpstream();
  // 150 tokens a call, as in the issue: 50 in (more than the 21 the body's size suggests) + 100 out.
  fake.usage.anthropic = anthropicUsage(50, 100);
  fake.usage.openai = { prompt_tokens: 50, completion_tokens: 100 };
  sc = await startSidecar({
    routes: [
      { name: "anthropic", provider: "anthropic", baseUrl: fake.url, models: ["claude-*"], key },
      { name: "openai", provider: "openai", baseUrl: `${fake.url}/v1`, models: ["gpt-*"], key },
    ],
  });
});

afterEach(async () => {
  await sc?.stop();
  await fake?.close();
});

let sessions = 0;
async function newSession() {
  const token = `tok-reserve-${++sessions}-${Math.random().toString(36).slice(2)}`;
  const sessionId = `sess-reserve-${sessions}`;
  sc.grant(token, sessionId);
  await sc.sync();
  return {
    sessionId,
    anthropic: new Anthropic({ baseURL: sc.url, apiKey: token, maxRetries: 0 }),
    openai: new OpenAI({ baseURL: `${sc.url}/v1`, apiKey: token, maxRetries: 0 }),
  };
}

const CAP = 100;
const msg = [{ role: "user" as const, content: "hi" }];
const ask = (c: Anthropic) => c.messages.create({ model: "claude-test", max_tokens: CAP, messages: msg });
const chat = (c: OpenAI) => c.chat.completions.create({ model: "gpt-test", max_completion_tokens: CAP, messages: msg });
const outcome = <T>(p: Promise<T>) =>
  p.then(
    (v) => ({ ok: true as const, v }),
    (e: unknown) => ({ ok: false as const, e: e as Error & { status?: number; code?: string } }),
  );

/** The documented reservation of a request the upstream received: ceil(body bytes / 4) + its output cap. */
const reservationOf = (r: FakeRequest) => Math.ceil(Number(r.headers["content-length"]) / 4) + CAP;

/** What the documented bound allows for the calls the upstream got, each using `used` tokens. */
function bound(limit: number, got: FakeRequest[], used: number) {
  const reserved = got.map(reservationOf);
  return {
    // Admitted together (none had ended): their reservations fit in the budget.
    calls: Math.floor(limit / Math.min(...reserved)),
    // The overshoot: what each call used past its reservation (here: its input underestimate).
    tokens: limit + reserved.reduce((sum, r) => sum + Math.max(0, used - r), 0),
  };
}

async function fireTogether(limit: number, calls: Array<() => Promise<unknown>>) {
  const held = fake.holdAnswers();
  const results = calls.map((c) => outcome(c()));
  // Every call has reached the upstream or been refused: a condition, not a timer.
  await until(
    () => (fake.requests.length + sc.refusals.length === calls.length ? true : undefined),
    "all calls to arrive upstream or be refused",
  );
  const got = [...fake.requests];
  held.release();
  const settled = await Promise.all(results);
  const b = bound(limit, got, 150);
  expect(got.length).toBeGreaterThan(0);
  expect(got.length).toBeLessThanOrEqual(b.calls);
  expect(got.length * 150).toBeLessThanOrEqual(b.tokens);
  expect(settled.filter((s) => s.ok)).toHaveLength(got.length);
  return { got, refused: settled.flatMap((s) => (s.ok ? [] : [s.e])) };
}

test("sessionTokens 1500: of 40 parallel calls of 150 tokens, only those whose reservations fit reach the upstream", async () => {
  sc.configure({ budgets: { sessionTokens: 1500 } });
  const s = await newSession();
  const { got, refused } = await fireTogether(
    1500,
    Array.from({ length: 40 }, () => () => ask(s.anthropic)),
  );
  const r = reservationOf(got[0]!);
  expect(got).toHaveLength(Math.floor(1500 / r));
  expect(refused).toHaveLength(40 - got.length);
  for (const e of refused) {
    expect(e).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(e.message).toContain("llmEndpoint.budgets.sessionTokens) of 1500");
    expect(e.message).toContain("this session has used 0 tokens");
    expect(e.message).toContain(`calls in flight reserve ${got.length * r}, and this call reserves ${r} `);
    expect(e.message).toContain(
      `: 0 + ${got.length * r} + ${r} = ${(got.length + 1) * r} > 1500; retry once calls in flight have ended`,
    );
    expect(e.message).toContain(
      `this call reserves ${r} (${r - CAP} input, estimated from the request's size, + ${CAP} output, from max_tokens ${CAP})`,
    );
  }
  // Settled with what they used: the session is past its line, and the next call says so.
  const after = await outcome(ask(s.anthropic));
  expect(after.ok).toBe(false);
  expect(!after.ok && after.e.message).toContain(
    `llm-endpoint token budget exhausted: this session has used ${got.length * 150} tokens, the limit (llmEndpoint.budgets.sessionTokens) is 1500`,
  );
});

test("dayTokens 1500: 40 parallel calls from four sessions share the day's line the same way", async () => {
  sc.configure({ budgets: { dayTokens: 1500 } });
  const four = await Promise.all([newSession(), newSession(), newSession(), newSession()]);
  const { got, refused } = await fireTogether(
    1500,
    Array.from({ length: 40 }, (_, i) => () => chat(four[i % 4]!.openai)),
  );
  expect(got).toHaveLength(Math.floor(1500 / reservationOf(got[0]!)));
  for (const e of refused) {
    expect(e).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(e).toMatchObject({ status: 403, code: "day_token_budget_exhausted" });
    expect(e.message).toContain("today (UTC");
    expect(e.message).toContain("llmEndpoint.budgets.dayTokens) of 1500");
    expect(e.message).toContain(`from max_completion_tokens ${CAP}`);
  }
});

test("a stream holds its reservation while it runs and settles with its real usage when it ends", async () => {
  fake.usage.anthropic = anthropicUsage(30, 20);
  sc.configure({ budgets: { sessionTokens: 200 } });
  const s = await newSession();
  const gate = fake.pauseStreams();
  const stream = await s.anthropic.messages.create({
    model: "claude-test",
    max_tokens: CAP,
    messages: msg,
    stream: true,
  });
  await gate.paused;
  const streamReserved = reservationOf(fake.requests[0]!);
  // Used 0, but the stream's reservation leaves no room for a second call.
  const during = await outcome(ask(s.anthropic));
  expect(during.ok).toBe(false);
  expect(!during.ok && during.e).toBeInstanceOf(Anthropic.PermissionDeniedError);
  expect(!during.ok && during.e.message).toContain(`calls in flight reserve ${streamReserved},`);
  expect(!during.ok && during.e.message).toContain("retry once calls in flight have ended");
  gate.release();
  for await (const _ of stream) void _;
  await sc.sync();
  expect(sc.calls.find((c) => c.stream)).toMatchObject({ status: 200, inputTokens: 30, outputTokens: 20 });
  // Settled at 50, not at its reservation: a call fits again (50 + 121 <= 200), then no more.
  expect((await outcome(ask(s.anthropic))).ok).toBe(true);
  const past = await outcome(ask(s.anthropic));
  expect(!past.ok && past.e.message).toContain("this session has used 100 tokens");
  expect(!past.ok && past.e.message).toContain(
    `it fits with an output cap of at most ${200 - 100 - (reservationOf(fake.requests[1]!) - CAP)} tokens`,
  );
});

test("a call the upstream fails (an error status, a reset) holds its reservation while in flight, then gives it back", async () => {
  sc.configure({ budgets: { sessionTokens: 200 } });
  const s = await newSession();
  for (const mode of [{ kind: "status", status: 529 }, { kind: "reset" }] as const) {
    fake.setMode(mode);
    const held = fake.holdAnswers();
    const n = fake.requests.length + 1;
    const failing = outcome(ask(s.anthropic));
    await fake.request(n);
    const during = await outcome(ask(s.anthropic));
    expect(!during.ok && during.e).toBeInstanceOf(Anthropic.PermissionDeniedError);
    held.release();
    const failed = await failing;
    expect(!failed.ok && failed.e.status).toBe(mode.kind === "reset" ? 502 : 529);
    fake.setMode({ kind: "ok" });
    await sc.sync();
    expect((await sc.stats()).inFlight).toBe(0);
  }
  // Nothing was used: the whole budget is there (150 + 121 > 200 only after this call).
  expect((await outcome(ask(s.anthropic))).ok).toBe(true);
  expect((await outcome(ask(s.anthropic))).ok).toBe(false);
});

test("a client gone mid-stream before any usage reached it is charged its reservation, and the record says so", async () => {
  sc.configure({ budgets: { sessionTokens: 200 } });
  const s = await newSession();
  const gate = fake.pauseStreams();
  const ac = new AbortController();
  const stream = await s.openai.chat.completions.create(
    { model: "gpt-test", max_completion_tokens: CAP, messages: msg, stream: true },
    { signal: ac.signal },
  );
  const it = stream[Symbol.asyncIterator]();
  await it.next();
  await gate.paused;
  const upstream = fake.requests[0]!;
  ac.abort();
  expect(await upstream.ended).toBe("closed-by-client");
  gate.release();
  // The client's body (the sidecar added stream_options upstream): ceil(bytes / 4) + the cap.
  const body = { model: "gpt-test", max_completion_tokens: CAP, messages: msg, stream: true };
  const charged = Math.ceil(Buffer.byteLength(JSON.stringify(body)) / 4) + CAP;
  const rec = await until(() => sc.calls.find((c) => c.error === "client disconnected"), "the cut call's record");
  expect(rec).toMatchObject({ inputTokens: 0, outputTokens: 0, estimatedTokens: charged });
  const next = await outcome(chat(s.openai));
  expect(!next.ok && next.e.message).toContain(`this session has used ${charged} tokens`);
});
