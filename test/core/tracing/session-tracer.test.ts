/**
 * The span mapping against a real OTLP/HTTP exporter and a loopback receiver that decodes what
 * it gets (protobuf and JSON): the span tree of a session from its transcript lines, model calls,
 * a steward verdict and an MCP call; redaction on every string; a child joining its parent's trace.
 * The redaction service is built in parallel (core/redaction): a minimal stand-in applies here.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type AddressInfo, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Redaction } from "../../../core/redaction/redaction.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { TranscriptWriter } from "../../../core/sessions/transcript.js";
import { SessionTracer } from "../../../core/tracing/session-tracer.js";
import type { TraceExportSettings } from "../../../core/tracing/settings.js";
import { startOtlpReceiver, type DecodedSpan, type OtlpReceiver } from "../../support/otlp-receiver.js";
import { redactionFor } from "../../support/redaction.js";

const SECRET = `ghp_${"A1b2C3d4E5".repeat(4).slice(0, 36)}`;

/** Stand-ins for the built-in redactors: `secrets` masks GitHub-token shapes, `metadata` drops content. */
// The daemon's real redactions (core/redaction): `secrets` and the default, `metadata`.
let secrets: Redaction;
let metadata: Redaction;
beforeAll(async () => {
  secrets = await redactionFor("secrets");
  metadata = await redactionFor("metadata");
});

let dir = "";
let receiver: OtlpReceiver;
let tracer: SessionTracer | undefined;
const logger = createMemoryLogger();

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-trace-"));
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
  await rm(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await tracer?.shutdown(5000);
  tracer = undefined;
  receiver.spans.length = 0;
  receiver.bodies.length = 0;
  receiver.answer(200);
});

function newTracer(): SessionTracer {
  tracer = new SessionTracer({ env: { OTEL_BSP_SCHEDULE_DELAY: "20" }, logger, now: Date.now });
  return tracer;
}

let n = 0;
function session(
  t: SessionTracer,
  settings: TraceExportSettings,
  redaction: Redaction,
  extra: { joins?: string; run?: { runId: string; stepId: string } } = {},
) {
  const id = `ses_${++n}`;
  const transcript = new TranscriptWriter(join(dir, `${id}.jsonl`), Date.now);
  const env = t.open(
    { sessionId: id, adapter: "claude", createdAt: Date.now(), transcript, model: "claude-sonnet-4-5", ...extra },
    settings,
    redaction,
  );
  return { id, transcript, env };
}

/** One session's life as its transcript tells it, with a model call and a verdict in the middle. */
async function live(t: SessionTracer, s: ReturnType<typeof session>) {
  const w = s.transcript;
  w.append("prompt.received", {
    promptId: "prm_1",
    sender: { kind: "sentinel", id: "snt_1" },
    urgency: "queue",
    delivery: "started",
    ref: { sentinelId: "snt_1", eventId: "evt_1" },
  });
  w.append("prompt", { promptId: "prm_1", sender: { kind: "sentinel" }, text: `fix it, token ${SECRET}` });
  w.append("update", {
    kind: "tool_call",
    update: {
      sessionUpdate: "tool_call",
      toolCallId: "call_1",
      title: "Run tests",
      kind: "execute",
      status: "pending",
      rawInput: { cmd: `echo ${SECRET}` },
    },
  });
  w.append("update", {
    kind: "tool_call_update",
    update: { sessionUpdate: "tool_call_update", toolCallId: "call_1", status: "completed", rawOutput: { out: "ok" } },
  });
  await w.flushed();
  t.modelCall(s.id, {
    model: "claude-sonnet-4-5",
    api: "anthropic",
    inputTokens: 12,
    outputTokens: 7,
    status: 200,
    at: new Date().toISOString(),
    latencyMs: 30,
    stream: false,
  });
  w.append("turn.ended", { promptId: "prm_1", stopReason: "end_turn", text: `done with ${SECRET}` });
  await w.flushed();
  t.verdict({
    sessionId: s.id,
    verdict: "stuck",
    reason: `loops on ${SECRET}`,
    trigger: "turn-ended",
    model: "ext-latest",
    at: Date.now(),
  });
  w.append("session.ended", { code: 0, signal: null });
  await w.close();
}

async function until(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const named = (spans: DecodedSpan[], name: string) => spans.find((s) => s.name === name);

describe.each(["http/protobuf", "http/json"] as const)("a traced session over %s", (protocol) => {
  const settings = (): TraceExportSettings => ({
    url: receiver.tracesUrl,
    source: "test",
    protocol,
    headers: { "x-test-auth": "hdr-secret" },
  });

  it("exports the span tree with GenAI attribute names; TRACEPARENT names the root", async () => {
    const t = newTracer();
    const s = session(t, settings(), secrets, { run: { runId: "run_1", stepId: "build" } });
    await live(t, s);
    const spans = await receiver.waitFor(
      (all) => (named(all, "invoke_agent claude") ? all : undefined),
      "the root span",
    );
    const root = named(spans, "invoke_agent claude")!;
    expect(s.env).toEqual({ TRACEPARENT: `00-${root.traceId}-${root.spanId}-01` });
    expect(root.parentSpanId).toBe("");
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "claude",
      "gen_ai.agent.id": s.id,
      "gen_ai.conversation.id": s.id,
      "gen_ai.request.model": "claude-sonnet-4-5",
      "svc.swarm.run_id": "run_1",
      "svc.swarm.step_id": "build",
    });
    expect(root.resource["service.name"]).toBe("svc");
    const turn = named(spans, "turn 1")!;
    const delivery = named(spans, "deliver snt_1")!;
    const tool = named(spans, "execute_tool execute")!;
    const chat = named(spans, "chat claude-sonnet-4-5")!;
    const verdict = named(spans, "evaluate session_steward")!;
    for (const x of [turn, delivery, verdict]) expect(x.parentSpanId).toBe(root.spanId);
    for (const x of [tool, chat]) expect(x.parentSpanId).toBe(turn.spanId);
    for (const x of spans) expect(x.traceId).toBe(root.traceId);
    expect(delivery.attributes).toMatchObject({
      "svc.sentinel.id": "snt_1",
      "svc.event.id": "evt_1",
      "svc.prompt.id": "prm_1",
    });
    expect(turn.attributes).toMatchObject({ "gen_ai.response.finish_reasons": ["end_turn"], "svc.prompt.id": "prm_1" });
    expect(JSON.parse(turn.attributes["gen_ai.input.messages"] as string)).toEqual([
      { role: "user", parts: [{ type: "text", content: "fix it, token [redacted]" }] },
    ]);
    expect(tool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "execute",
      "gen_ai.tool.call.id": "call_1",
      "gen_ai.tool.call.arguments": '{"cmd":"echo [redacted]"}',
      "gen_ai.tool.call.result": '{"out":"ok"}',
    });
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.response.model": "claude-sonnet-4-5",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.usage.output_tokens": 7,
    });
    expect(Number(chat.endNs - chat.startNs) / 1e6).toBeCloseTo(30, 0);
    expect(verdict.events[0]).toMatchObject({
      name: "gen_ai.evaluation.result",
      attributes: { "gen_ai.evaluation.score.label": "stuck", "gen_ai.evaluation.explanation": "loops on [redacted]" },
    });
    expect(receiver.requests.at(-1)!.headers["x-test-auth"]).toBe("hdr-secret");
    expect(receiver.requests.at(-1)!.contentType).toBe(
      protocol === "http/json" ? "application/json" : "application/x-protobuf",
    );
    for (const b of receiver.bodies) expect(b.includes(SECRET)).toBe(false);
  });

  it("with the metadata redactor no prompt, reply, tool argument or reason is exported, and the spans still are", async () => {
    const t = newTracer();
    const s = session(t, settings(), metadata);
    await live(t, s);
    const spans = await receiver.waitFor(
      (all) => (named(all, "invoke_agent claude") ? all : undefined),
      "the root span",
    );
    expect(spans.map((x) => x.name).sort()).toEqual([
      "chat claude-sonnet-4-5",
      "deliver snt_1",
      "evaluate session_steward",
      "execute_tool execute",
      "invoke_agent claude",
      "turn 1",
    ]);
    for (const b of receiver.bodies)
      for (const text of ["fix it", "done with", "loops on", "echo ", "Run tests"])
        expect(b.includes(text), text).toBe(false);
    expect(named(spans, "turn 1")!.attributes["gen_ai.response.finish_reasons"]).toEqual(["end_turn"]);
  });
});

describe("propagation", () => {
  const settings = (): TraceExportSettings => ({
    url: receiver.tracesUrl,
    source: "test",
    protocol: "http/protobuf",
    headers: {},
  });

  it("a child session joins its parent's trace under the parent's span", async () => {
    const t = newTracer();
    const parent = session(t, settings(), metadata);
    const child = session(t, settings(), metadata, { joins: parent.id });
    const [, traceId, spanId] = parent.env.TRACEPARENT!.split("-");
    expect(child.env.TRACEPARENT!.split("-")[1]).toBe(traceId);
    child.transcript.append("session.ended", { code: 0, signal: null });
    await child.transcript.close();
    const span = await receiver.waitFor(
      (all) => all.find((x) => x.attributes["gen_ai.agent.id"] === child.id),
      "the child's span",
    );
    expect(span.parentSpanId).toBe(spanId);
    expect(span.attributes["svc.session.parent_id"]).toBe(parent.id);
  });

  it("an MCP call carrying _meta.traceparent is an execute_tool span under it", async () => {
    const t = newTracer();
    const s = session(t, settings(), secrets);
    const [, traceId, spanId] = s.env.TRACEPARENT!.split("-");
    const result = await t.around(
      { tool: "sessions_list", meta: { traceparent: s.env.TRACEPARENT }, args: { q: SECRET }, requestId: 7 },
      s.id,
      async () => ({ isError: true }),
    );
    expect(result).toEqual({ isError: true });
    const span = await receiver.waitFor((all) => named(all, "execute_tool sessions_list"), "the MCP span");
    expect(span).toMatchObject({ traceId, parentSpanId: spanId, status: { code: 2 } });
    expect(span.attributes).toMatchObject({
      "gen_ai.tool.name": "sessions_list",
      "gen_ai.tool.call.id": "7",
      "gen_ai.tool.call.arguments": '{"q":"[redacted]"}',
    });
  });
});

describe("an unreachable endpoint", () => {
  it("never blocks: the session's spans are dropped, the failure is logged once, shutdown is bounded", async () => {
    const dead = await startOtlpReceiver();
    const url = dead.tracesUrl;
    await dead.close();
    const t = newTracer();
    for (let i = 0; i < 3; i++) {
      const s = session(
        t,
        { url, source: "test", protocol: "http/protobuf", headers: { authorization: "Bearer hdr-secret-xyz" } },
        metadata,
      );
      s.transcript.append("session.ended", { code: 0, signal: null });
      await s.transcript.close();
    }
    await until(() => logger.lines.some((l) => l.includes("could not be sent")), "the export failure in the log");
    // More sessions while it keeps failing: told no more than once per window.
    for (let i = 0; i < 3; i++) {
      const s = session(
        t,
        { url, source: "test", protocol: "http/protobuf", headers: { authorization: "Bearer hdr-secret-xyz" } },
        metadata,
      );
      s.transcript.append("session.ended", { code: 0, signal: null });
      await s.transcript.close();
    }
    await t.shutdown(3000);
    tracer = undefined;
    expect(logger.lines.filter((l) => l.includes("could not be sent"))).toHaveLength(1);
    expect(logger.lines.join("\n")).not.toContain("hdr-secret-xyz");
  });

  it("gives up at the bound it was given when the endpoint takes the connection and never answers", async () => {
    // The exporter would wait its own 10 s for an answer: the bound (300 ms) ends the wait, and
    // the log says so (the warning is written only when the bound, not the export, ended it).
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket.on("error", () => undefined)));
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const t = newTracer();
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/traces`;
      const s = session(t, { url, source: "test", protocol: "http/protobuf", headers: {} }, metadata);
      s.transcript.append("session.ended", { code: 0, signal: null });
      await s.transcript.close();
      await until(() => held.length > 0, "the exporter to connect");
      await t.shutdown(300);
      tracer = undefined;
      const gaveUp = logger.lines.filter((l) => l.includes("did not take the last spans in time"));
      expect(gaveUp.at(-1)).toContain('"waitedMs":300');
    } finally {
      held.forEach((socket) => socket.destroy());
      await new Promise((r) => silent.close(r));
    }
  });
});
