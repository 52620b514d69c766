/**
 * Issue 26, tracing: a real daemon traces sessions of a real ACP agent to an OTLP/HTTP receiver
 * on loopback that decodes the protobuf it gets. The span tree (invoke_agent root, a sentinel's
 * delivery, turns, the agent's tool call, the sidecar's model call, an MCP call carrying the
 * session's traceparent, a child session under its parent, a steward verdict) arrives with GenAI attribute names; a
 * planted secret never appears in any exported byte; with the default redactor no prompt text
 * leaves; a dead endpoint breaks nothing.
 */
import { sessionSentinel } from "../support/agentpush.js";
import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { environOf } from "../support/process-alive.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, useDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { startFakeLlmUpstream, type FakeLlmUpstream } from "../support/fake-llm-upstream.js";
import { startFakeJudge, type FakeJudge } from "../support/fake-judge.js";
import { startOtlpReceiver, type DecodedSpan, type OtlpReceiver } from "../support/otlp-receiver.js";
import { FIXTURE_AGENTS, fixtureAgent } from "../core/sessions/harness.js";

const SECRET = `ghp_${randomBytes(18).toString("hex")}`;
const HEADER_SECRET = `hdr-${randomBytes(8).toString("hex")}`;
const API_KEY = `sk-ant-e2e-${randomBytes(12).toString("hex")}`;
const JUDGE_KEY = `judge-${randomBytes(12).toString("hex")}`;

const post = (body: unknown) => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

async function json(r: Promise<Response>): Promise<any> {
  const res = await r;
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status}: ${text}`);
  return JSON.parse(text);
}

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const prompt = (d: DaemonProcess, id: string, text: string) =>
  json(d.fetch(`/sessions/${id}/prompt`, post({ text, wait: true })));
const stop = (d: DaemonProcess, id: string) => json(d.fetch(`/sessions/${id}/stop`, { method: "POST" }));
const rootOf = (id: string) => (all: DecodedSpan[]) =>
  all.find((s) => s.name.startsWith("invoke_agent ") && s.attributes["gen_ai.agent.id"] === id);

function useReceivers(): { otlp: () => OtlpReceiver; upstream: () => FakeLlmUpstream; judge: () => FakeJudge } {
  let otlp: OtlpReceiver | undefined;
  let upstream: FakeLlmUpstream | undefined;
  let judge: FakeJudge | undefined;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    upstream = await startFakeLlmUpstream();
    judge = await startFakeJudge();
  });
  afterAll(async () => {
    await otlp?.close();
    await upstream?.close();
    await judge?.close();
  });
  return { otlp: () => otlp!, upstream: () => upstream!, judge: () => judge! };
}

describe("a traced daemon (traceRedactor secrets, endpoint from OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  const r = useReceivers();
  const fx = useDaemonProcess({
    prefix: "svc-e2e-trace-",
    setup: async ({ home }) => {
      await writeFile(
        join(home, "config.json"),
        JSON.stringify({
          features: { llmEndpoint: true },
          llmEndpoint: {
            port: 0,
            upstreams: { anthropic: { provider: "anthropic", baseUrl: r.upstream().url, models: ["claude-*"] } },
          },
          defaults: { extTracing: true, traceRedactor: "secrets", adapters: { claude: { auth: { apiKey: API_KEY } } } },
          acpAgents: { ...FIXTURE_AGENTS, tracer: fixtureAgent("trace-agent.mjs") },
          // The steward judges each turn's end (through the sidecar, since it runs): its verdicts are spans too.
          extJudge: { apiKey: JUDGE_KEY, baseUrl: r.judge().baseUrl },
        }),
      );
      return {
        env: {
          OTEL_EXPORTER_OTLP_ENDPOINT: r.otlp().url,
          OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${HEADER_SECRET}`,
          OTEL_BSP_SCHEDULE_DELAY: "50",
        },
      };
    },
  });

  it("exports the session's span tree with GenAI names; children and MCP calls join it; no secret leaves", async () => {
    const d = fx.daemon;
    await until(
      async () => ((await json(d.fetch("/llm-endpoint/status"))).sidecar.state === "running" ? true : undefined),
      "the sidecar",
    );
    const { descriptor: parent } = await json(d.fetch("/sessions", post({ adapter: "tracer", cwd: fx.home })));
    // A sentinel's event delivered to the session.
    await json(d.fetch("/sentinels", post(sessionSentinel(parent.id, "ci:acme/api*"))));
    expect(
      (
        await d.fetch(
          "/providers/agentpush/events",
          post({ id: "build-1", type: "ci.build.failed", subjects: ["ci:acme/api"] }),
        )
      ).status,
    ).toBe(200);
    await until(
      async () => ((await json(d.fetch(`/sessions/${parent.id}`))).descriptor.turns >= 1 ? true : undefined),
      "the delivery's turn",
    );
    // A turn with a tool call and a model call through the sidecar, a secret in the prompt.
    const turn = await prompt(d, parent.id, `use the model; the token is ${SECRET}`);
    const answer = JSON.parse(turn.result.text);
    expect(answer.model).toBeTruthy();
    expect(answer.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, rootSpanId] = answer.traceparent.split("-");
    // A child session: its agent's environment carries TRACEPARENT of its own span, in the parent's trace.
    const { descriptor: child } = await json(
      d.fetch("/sessions", post({ adapter: "echo", cwd: fx.home, parentSessionId: parent.id })),
    );
    const childEnv = environOf(child.pid);
    expect(childEnv.TRACEPARENT?.split("-")[1]).toBe(traceId);
    // An MCP call made with the parent's session token and its traceparent.
    const sessionToken = environOf(parent.pid).SVC_SESSION_TOKEN!;
    const client = new Client({ name: "trace-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${d.baseUrl}/mcp`), {
        requestInit: { headers: { "x-svc-session-token": sessionToken } },
      }),
    );
    await client.callTool({ name: "session_list", arguments: {}, _meta: { traceparent: answer.traceparent } });
    await client.close();
    // The steward's verdict on the parent's turn, before the session (and its root span) ends.
    await until(
      async () => ((await json(d.fetch(`/sessions/${parent.id}`))).descriptor.verdict ? true : undefined),
      "the steward's verdict",
    );
    await stop(d, child.id);
    await stop(d, parent.id);

    const spans = await r
      .otlp()
      .waitFor(
        (all) => (rootOf(parent.id)(all) && rootOf(child.id)(all) ? all : undefined),
        "both sessions' root spans",
      );
    const root = rootOf(parent.id)(spans)!;
    expect(root).toMatchObject({ traceId, spanId: rootSpanId, parentSpanId: "" });
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "tracer",
      "gen_ai.conversation.id": parent.id,
    });
    const inTrace = spans.filter((s) => s.traceId === traceId);
    const byName = (prefix: string) => inTrace.filter((s) => s.name.startsWith(prefix));
    expect(byName("deliver ")).toHaveLength(1);
    expect(byName("deliver ")[0]!.parentSpanId).toBe(rootSpanId);
    const turns = byName("turn ");
    expect(turns).toHaveLength(2);
    for (const t of turns)
      expect(t).toMatchObject({
        parentSpanId: rootSpanId,
        attributes: { "gen_ai.response.finish_reasons": ["end_turn"] },
      });
    const tools = byName("execute_tool execute");
    expect(tools).toHaveLength(2);
    expect(tools[0]!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.call.id": "call_1",
    });
    const chat = byName("chat ")[0]!;
    expect(chat.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "claude-sonnet-4-5",
      "gen_ai.usage.input_tokens": expect.any(Number),
    });
    expect(turns.map((t) => t.spanId)).toContain(chat.parentSpanId);
    const mcp = byName("execute_tool session_list")[0]!;
    expect(mcp).toMatchObject({ parentSpanId: rootSpanId, attributes: { "gen_ai.tool.name": "session_list" } });
    const childRoot = rootOf(child.id)(spans)!;
    expect(childRoot).toMatchObject({ traceId, parentSpanId: rootSpanId });
    expect(childEnv.TRACEPARENT).toBe(`00-${traceId}-${childRoot.spanId}-01`);
    const verdict = byName("evaluate session_steward")[0]!;
    expect(verdict).toMatchObject({
      parentSpanId: rootSpanId,
      attributes: {
        "gen_ai.evaluation.name": "session_steward",
        "gen_ai.evaluation.score.label": "on_track",
        "svc.steward.trigger": "turn-ended",
      },
    });
    // The judge got the turn's transcript through the same redaction: the planted secret never reached it.
    const judged = r.judge().requests.filter((q) => q.sessionId === parent.id);
    expect(judged.length).toBeGreaterThanOrEqual(1);
    for (const q of judged)
      for (const s of [SECRET, API_KEY, JUDGE_KEY, sessionToken]) expect(q.raw.includes(s)).toBe(false);
    // What left: protobuf, the configured header, and no secret in any byte; nothing secret logged.
    expect(r.otlp().requests[0]!.contentType).toBe("application/x-protobuf");
    expect(r.otlp().requests[0]!.headers.authorization).toBe(`Bearer ${HEADER_SECRET}`);
    for (const b of r.otlp().bodies)
      for (const s of [SECRET, API_KEY, JUDGE_KEY, sessionToken]) expect(b.includes(s)).toBe(false);
    expect(d.logs()).not.toContain(HEADER_SECRET);
  });
});

describe("the default redactor (metadata) and --no-trace", () => {
  const r = useReceivers();
  const fx = useDaemonProcess({
    prefix: "svc-e2e-trace-meta-",
    setup: async ({ home }) => {
      await writeFile(
        join(home, "config.json"),
        JSON.stringify({
          defaults: { extTracing: true, traceEndpoint: r.otlp().tracesUrl },
          acpAgents: { ...FIXTURE_AGENTS, tracer: fixtureAgent("trace-agent.mjs") },
        }),
      );
      return { env: { OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json" } };
    },
  });

  it("exports the spans without any prompt or reply text; a session started --no-trace exports nothing", async () => {
    const d = fx.daemon;
    const { descriptor } = await json(d.fetch("/sessions", post({ adapter: "tracer", cwd: fx.home })));
    await prompt(d, descriptor.id, "a prompt about the quarterly numbers");
    const off = await runCli(
      ["sessions", "run", "--adapter", "echo", "--prompt", "untraced words", "--no-trace", "--json"],
      { home: fx.home },
    );
    expect(off.code, off.stderr).toBe(0);
    const offId: string = JSON.parse(off.stdout).descriptor.id;
    await stop(d, descriptor.id);
    const spans = await r.otlp().waitFor((all) => (rootOf(descriptor.id)(all) ? all : undefined), "the root span");
    expect(spans.map((s) => s.name)).toEqual(expect.arrayContaining(["turn 1", "execute_tool execute"]));
    expect(r.otlp().requests.every((q) => q.contentType.startsWith("application/json"))).toBe(true);
    for (const b of r.otlp().bodies)
      for (const text of ["quarterly", "untraced words"]) expect(b.includes(text), text).toBe(false);
    expect(spans.some((s) => s.attributes["gen_ai.agent.id"] === offId)).toBe(false);
  });
});

describe("a dead endpoint", () => {
  const fx = useDaemonProcess({
    prefix: "svc-e2e-trace-dead-",
    setup: async ({ home }) => {
      const dead = await startOtlpReceiver();
      await dead.close();
      await writeFile(
        join(home, "config.json"),
        JSON.stringify({ defaults: { extTracing: true, traceEndpoint: dead.tracesUrl }, acpAgents: FIXTURE_AGENTS }),
      );
      return { env: { OTEL_BSP_SCHEDULE_DELAY: "20" } };
    },
  });

  it("sessions run and end as usual, the failure is logged, the daemon stops in bounded time", async () => {
    const d = fx.daemon;
    for (let i = 0; i < 2; i++) {
      const { descriptor } = await json(d.fetch("/sessions", post({ adapter: "echo", cwd: fx.home })));
      expect((await prompt(d, descriptor.id, `hello ${i}`)).result.text).toBe(`echo: hello ${i}`);
      await stop(d, descriptor.id);
    }
    await until(
      async () => (d.logs().includes("could not be sent to the OTLP endpoint") ? true : undefined),
      "the export failure in the log",
    );
    const started = Date.now();
    expect(await d.stop()).toBe(0);
    expect(Date.now() - started).toBeLessThan(30_000);
  });
});
