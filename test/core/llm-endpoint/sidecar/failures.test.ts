/**
 * When the upstream or the client fails: timeouts are 504s, refusals and resets 502s, in each
 * API's shape (the SDK's error class) and counted; an upstream error status passes through; a
 * client gone mid-stream closes the upstream request; the process never outlives its parent.
 */
import Anthropic from "@anthropic-ai/sdk";
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import OpenAI from "openai";
import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import type { RouteSpec } from "../../../../core/llm-endpoint/protocol.js";
import { startFakeLlmUpstream, type FakeLlmUpstream } from "../../../support/fake-llm-upstream.js";
import { SIDECAR_MAIN, startSidecar, type TestSidecar } from "../../../support/llm-sidecar.js";

const TOKEN = "tok-failures";
let fake: FakeLlmUpstream;
let sc: TestSidecar;
let anthropic: Anthropic;
let openai: OpenAI;
let deadPort: number;

const key = { kind: "apiKey" as const, value: "sk-upstream", from: "test" };

beforeAll(async () => {
  fake = await startFakeLlmUpstream();
  const probe = createServer();
  await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
  deadPort = (probe.address() as { port: number }).port;
  await new Promise((r) => probe.close(r));
  const routes: RouteSpec[] = [
    { name: "anthropic", provider: "anthropic", baseUrl: fake.url, models: ["claude-*"], key },
    { name: "openai", provider: "openai", baseUrl: `${fake.url}/v1`, models: ["gpt-*"], key },
    { name: "dead", provider: "anthropic", baseUrl: `http://127.0.0.1:${deadPort}`, models: ["dead-*"], key },
  ];
  sc = await startSidecar({ routes });
  sc.grant(TOKEN, "sess-f");
  anthropic = new Anthropic({ baseURL: sc.url, apiKey: TOKEN, maxRetries: 0 });
  openai = new OpenAI({ baseURL: `${sc.url}/v1`, apiKey: TOKEN, maxRetries: 0 });
});

afterEach(async () => {
  fake.setMode({ kind: "ok" });
  sc.configure({ upstreamTimeoutMs: 60_000 });
  await sc.sync();
});

afterAll(async () => {
  await sc?.stop();
  await fake?.close();
});

const msg = [{ role: "user" as const, content: "hi" }];
const ask = (model = "claude-test") => anthropic.messages.create({ model, max_tokens: 8, messages: msg });
const failure = <T>(p: Promise<T>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error & { status?: number; error?: any },
  );

/** Reads a stream to its end or its error: the event types seen, and the error. */
async function drain(stream: AsyncIterable<object>): Promise<{ seen: string[]; err: Error | undefined }> {
  const seen: string[] = [];
  try {
    for await (const e of stream) seen.push("type" in e ? String(e.type) : "chunk");
  } catch (e) {
    return { seen, err: e as Error };
  }
  return { seen, err: undefined };
}

/** The record of the call made after this point. */
async function nextCall() {
  await sc.sync();
  const n = sc.calls.length + 1;
  return () => sc.call(n);
}

test("no response headers within the timeout: 504 in each API's shape, counted, and the upstream request closed", async () => {
  sc.configure({ upstreamTimeoutMs: 300 });
  fake.setMode({ kind: "hang" });
  const call = await nextCall();
  const err = await failure(ask());
  expect(err).toBeInstanceOf(Anthropic.InternalServerError);
  expect(err!.status).toBe(504);
  expect(err!.error).toMatchObject({
    type: "error",
    error: { type: "api_error", message: expect.stringContaining("no response headers within 300 ms") },
  });
  expect(await call()).toMatchObject({
    status: 504,
    error: expect.stringContaining("no response headers"),
    route: "anthropic",
  });
  expect(await fake.requests.at(-1)!.ended).toBe("closed-by-client");
  const oerr = await failure(openai.chat.completions.create({ model: "gpt-test", messages: msg }));
  expect(oerr).toBeInstanceOf(OpenAI.InternalServerError);
  expect(oerr).toMatchObject({ status: 504, type: "server_error" });
});

test("a stream idle past the timeout ends with an error event the SDK raises, counted as 504", async () => {
  // Long enough for the first event to arrive on a loaded machine; the idle wait after it is the test.
  sc.configure({ upstreamTimeoutMs: 1500 });
  fake.setMode({ kind: "stall-stream" });
  const call = await nextCall();
  const { seen, err } = await drain(
    await anthropic.messages.create({ model: "claude-test", max_tokens: 8, messages: msg, stream: true }),
  );
  expect(seen).toEqual(["message_start"]);
  expect(err).toBeInstanceOf(Anthropic.APIError);
  expect(err!.message).toContain("idle");
  expect(await call()).toMatchObject({ status: 504, stream: true, error: expect.stringContaining("idle") });
  const { err: oerr } = await drain(
    await openai.chat.completions.create({ model: "gpt-test", messages: msg, stream: true }),
  );
  expect(oerr).toBeInstanceOf(OpenAI.APIError);
  expect(oerr!.message).toContain("idle");
});

test("an upstream that resets the connection or refuses it: 502, counted", async () => {
  fake.setMode({ kind: "reset" });
  const call = await nextCall();
  const err = await failure(ask());
  expect(err).toBeInstanceOf(Anthropic.InternalServerError);
  expect(err!.status).toBe(502);
  expect(await call()).toMatchObject({ status: 502, error: expect.stringContaining("reset") });
  const oerr = await failure(openai.chat.completions.create({ model: "gpt-test", messages: msg }));
  expect(oerr).toMatchObject({ status: 502, type: "server_error" });
  const refused = await failure(ask("dead-model"));
  expect(refused).toMatchObject({ status: 502 });
  expect(refused!.message).toContain("refused the connection");
  await sc.sync();
  expect(sc.calls.at(-1)).toMatchObject({ route: "dead", status: 502, error: "upstream refused the connection" });
});

test("an upstream reset mid-stream ends the stream with an error event, counted as 502", async () => {
  fake.setMode({ kind: "reset-stream" });
  const call = await nextCall();
  const { seen, err } = await drain(
    await anthropic.messages.create({ model: "claude-test", max_tokens: 8, messages: msg, stream: true }),
  );
  expect(seen).toEqual(["message_start"]);
  expect(err).toBeInstanceOf(Anthropic.APIError);
  expect(err!.message).toContain("reset mid-answer");
  expect(await call()).toMatchObject({
    status: 502,
    stream: true,
    error: "upstream reset mid-answer",
    inputTokens: fake.usage.anthropic.input_tokens,
  });
});

test("an upstream's own error status passes through with its body", async () => {
  fake.setMode({ kind: "status", status: 529 });
  const call = await nextCall();
  const err = await failure(ask());
  expect(err).toBeInstanceOf(Anthropic.APIError);
  expect(err).toMatchObject({ status: 529, error: { error: { type: "overloaded_error" } } });
  expect(await call()).toMatchObject({ status: 529 });
});

test("a client gone mid-stream closes the upstream request and is recorded", async () => {
  const gate = fake.pauseStreams();
  const call = await nextCall();
  const ac = new AbortController();
  const stream = await anthropic.messages.create(
    { model: "claude-test", max_tokens: 8, messages: msg, stream: true },
    { signal: ac.signal },
  );
  const it = stream[Symbol.asyncIterator]();
  expect((await it.next()).value?.type).toBe("message_start");
  await gate.paused;
  const upstream = fake.requests.at(-1)!;
  ac.abort();
  expect(await upstream.ended).toBe("closed-by-client");
  gate.release();
  expect(await call()).toMatchObject({ status: 200, stream: true, error: "client disconnected" });
  expect((await sc.stats()).inFlight).toBe(0);
});

test("the sidecar exits when its parent's IPC channel closes, and refuses to run without one", async () => {
  const other = await startSidecar({ routes: [] });
  const exited = new Promise<number | null>((r) => other.child.once("exit", (code) => r(code)));
  other.child.disconnect();
  expect(await exited).toBe(0);
  const byHand = spawn(process.execPath, [SIDECAR_MAIN], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  byHand.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((r) => byHand.once("exit", (c) => r(c)));
  expect(code).toBe(2);
  expect(stderr).toContain("the daemon starts this process");
});

test("stats reports the process's memory and call count", async () => {
  const s = await sc.stats();
  expect(s.rssBytes).toBeGreaterThan(1024 * 1024);
  expect(s.calls).toBe(sc.calls.length);
});
