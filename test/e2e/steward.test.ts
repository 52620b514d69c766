/**
 * The session steward against real parts: a daemon child process with fixture ACP agents, a judge
 * on loopback, the CLI, REST and a real MCP client.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, useDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { startFakeJudge, type FakeJudge, type JudgeRequest } from "../support/fake-judge.js";
import { FIXTURE_AGENTS, fixtureAgent } from "../core/sessions/harness.js";

const KEY = "judge-key-7f3a9c1e5b2d4068";
const GHP = "ghp_" + "Zq8Lw2Xc4Vb6Nm1Ar3Ts5Yu7Io9Pe0Kd2Fh";

async function until<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const json = async (r: Promise<Response>): Promise<any> => (await r).json();
const post = (d: DaemonProcess, path: string, body: unknown = {}) =>
  d.fetch(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

async function start(d: DaemonProcess, body: Record<string, unknown>): Promise<string> {
  const r = await json(post(d, "/sessions", { cwd: d.home, ...body }));
  if (!r.descriptor) throw new Error(JSON.stringify(r));
  return r.descriptor.id as string;
}

let judge: FakeJudge;
beforeAll(async () => {
  judge = await startFakeJudge();
});
afterAll(async () => judge?.close());

const forSession = (id: string) => judge.requests.filter((r) => r.sessionId === id);
const requestOf = (id: string, trigger: string) =>
  until(() => forSession(id).find((r) => r.trigger === trigger), `a judge request for ${id} (${trigger})`);
const userMessage = (r: JudgeRequest): string => r.body.messages[1].content;

/** Waits until the session's descriptor holds a verdict of this trigger (the judgement is over). */
const verdictOf = (d: DaemonProcess, id: string, trigger: string) =>
  until(async () => {
    const v = (await json(d.fetch(`/sessions/${id}`))).descriptor?.verdict;
    return v?.trigger === trigger && v;
  }, `the ${trigger} verdict of ${id}`);

describe("the steward with a judge key", () => {
  const fx = useDaemonProcess({
    prefix: "svc-e2e-steward-",
    setup: async ({ home }) => {
      const { writeFile } = await import("node:fs/promises");
      await writeFile(
        join(home, "config.json"),
        JSON.stringify({
          acpAgents: { ...FIXTURE_AGENTS, context: fixtureAgent("context-agent.mjs") },
          extJudge: { baseUrl: judge.baseUrl, timeoutSec: 1.5 },
          defaults: { contextContinuity: { warnAtPct: 50, handoffAtQuotaRemaining: 5 } },
        }),
      );
      return { env: { EXT_JUDGE_API_KEY: KEY, SVC_TURN_STALL_AFTER_MS: "400" } };
    },
  });

  it("a turn's end: one redacted request in the documented shape, once per window; the verdict on REST, CLI and MCP", async () => {
    judge.mode = { kind: "verdict", verdict: "done", reason: "it answered the ping", suggestedPrompt: "stop here" };
    const id = await start(fx.daemon, { adapter: "echo", prompt: `ping with ${GHP} and ${KEY} inside` });
    const req = await requestOf(id, "turn-ended");
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body).toMatchObject({
      model: "ext-latest",
      response_format: { type: "json_schema", json_schema: { name: "session_verdict", strict: true } },
    });
    expect(req.body.messages.map((m: any) => m.role)).toEqual(["system", "user"]);
    expect(req.raw).not.toContain(GHP);
    expect(req.raw).not.toContain(KEY);
    // The judge's redactor is `secrets` (no traceRedactor set): the text leaves, the secrets do not.
    expect(req.raw).toContain("ping with");

    const v = await verdictOf(fx.daemon, id, "turn-ended");
    expect(v).toEqual({
      verdict: "done",
      reason: "it answered the ping",
      suggestedPrompt: "stop here",
      trigger: "turn-ended",
      at: expect.any(Number),
      model: "ext-latest",
    });
    expect(JSON.parse(await readFile(join(fx.home, "sessions", id, "verdict.json"), "utf8"))).toEqual({
      version: 1,
      checksum: expect.stringMatching(/^[0-9a-f]{8}$/),
      verdict: v,
    });

    // A second turn's end within the window asks nothing: the judgement asked for next is the only other request.
    const turn = await json(post(fx.daemon, `/sessions/${id}/prompt`, { text: "again", wait: true }));
    expect(turn.result.stopReason).toBe("end_turn");
    judge.mode = { kind: "verdict", verdict: "on_track", reason: "asked by a person" };
    const asked = await json(post(fx.daemon, `/sessions/${id}/judge`));
    expect(asked.verdict).toMatchObject({ verdict: "on_track", trigger: "request" });
    expect(forSession(id).map((r) => r.trigger)).toEqual(["turn-ended", "request"]);

    const show = await runCli(["sessions", "show", id], { home: fx.home });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain("verdict: on_track (request");
    expect(show.stdout).toContain("reason: asked by a person");
    const ls = await runCli(["sessions", "ls"], { home: fx.home });
    expect(ls.stdout).toMatch(/VERDICT/);
    expect(ls.stdout.split("\n").find((l) => l.startsWith(id))).toContain("on_track");

    judge.mode = { kind: "verdict", verdict: "needs_human", reason: "wants a decision" };
    const cli = await runCli(["sessions", "judge", id, "--json"], { home: fx.home });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).verdict).toMatchObject({ verdict: "needs_human", trigger: "request" });

    const client = new Client({ name: "svc-steward-test", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    judge.mode = { kind: "verdict", verdict: "stuck", reason: "via mcp" };
    const viaMcp = await client.callTool({ name: "session_judge", arguments: { sessionId: id } });
    expect((viaMcp.structuredContent as any).verdict).toMatchObject({
      verdict: "stuck",
      reason: "via mcp",
      trigger: "request",
    });
    const list = await client.callTool({ name: "session_list", arguments: {} });
    expect((list.structuredContent as any).sessions.find((s: any) => s.id === id).verdict).toMatchObject({
      verdict: "stuck",
    });
    const recap = await client.callTool({ name: "session_recap", arguments: { sessionId: id } });
    expect((recap.structuredContent as any).session.verdict).toMatchObject({ verdict: "stuck" });
    await client.close();
    expect(forSession(id).map((r) => r.trigger)).toEqual(["turn-ended", "request", "request", "request"]);

    // The event the tracing consumes (from /events' backlog), and the transcript line.
    const stream = await fx.daemon.fetch("/events", { headers: { "last-event-id": "0" } });
    const reader = stream.body!.getReader();
    let sse = "";
    while (!sse.includes(`"trigger":"turn-ended"`) || !sse.includes("event: session:verdict")) {
      const { value, done } = await reader.read();
      if (done) break;
      sse += new TextDecoder().decode(value);
    }
    await reader.cancel();
    const data = sse.split("\n\n").find((b) => b.includes("session:verdict") && b.includes(id))!;
    expect(
      JSON.parse(
        data
          .split("\n")
          .find((l) => l.startsWith("data: "))!
          .slice(6),
      ).data,
    ).toEqual({
      sessionId: id,
      verdict: "done",
      reason: "it answered the ping",
      suggestedPrompt: "stop here",
      trigger: "turn-ended",
      model: "ext-latest",
      at: expect.any(Number),
    });
    const events = await readFile(join(fx.home, "sessions", id, "events.jsonl"), "utf8");
    expect(events).toContain('"steward.verdict"');
    await post(fx.daemon, `/sessions/${id}/stop`);
  });

  it("a stalled child that is stuck: its parent is told, queued (never an interrupt), and nothing is sent to the child", async () => {
    judge.mode = { kind: "verdict", verdict: "on_track", reason: "fine" };
    const parent = await start(fx.daemon, { adapter: "echo", prompt: "hello" });
    await verdictOf(fx.daemon, parent, "turn-ended");
    judge.mode = {
      kind: "verdict",
      verdict: "stuck",
      reason: "no output for a while",
      suggestedPrompt: "try a smaller step",
    };
    const child = await start(fx.daemon, { adapter: "hang", prompt: "work", parentSessionId: parent });
    const req = await requestOf(child, "stalled");
    expect(userMessage(req)).toContain('"stalledForSec"');
    const told = await until(async () => {
      const lines = (await readFile(join(fx.home, "sessions", parent, "events.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      return lines.find((l) => l.type === "prompt" && String(l.data?.text).startsWith("[svc steward]"));
    }, "the parent's message");
    expect(told.data.text).toContain(`your child session ${child} is stuck: no output for a while`);
    expect(told.data.text).toContain("try a smaller step");
    expect(told.data.sender).toEqual({ kind: "system", id: "steward" });
    const childLines = await readFile(join(fx.home, "sessions", child, "events.jsonl"), "utf8");
    expect(childLines.match(/"type":"prompt"/g)).toHaveLength(1);
    await post(fx.daemon, `/sessions/${child}/stop`);
    await post(fx.daemon, `/sessions/${parent}/stop`);
  });

  it("a handoff suggestion and a context threshold each ask once", async () => {
    judge.mode = { kind: "verdict", verdict: "on_track", reason: "fine" };
    const q = await start(fx.daemon, { adapter: "echo", prompt: "quota:pro:1:5h" });
    await requestOf(q, "handoff-suggested");
    const c = await start(fx.daemon, { adapter: "context", prompt: "usage:150000:200000" });
    const req = await requestOf(c, "context-warn");
    expect(userMessage(req)).toContain('"contextPct": 75');
    await verdictOf(fx.daemon, c, "context-warn");
    // The turn that crossed it ended while that judgement was in flight: not asked again for it.
    const more = await json(post(fx.daemon, `/sessions/${c}/prompt`, { text: "usage:160000:200000", wait: true }));
    expect(more.result.stopReason).toBe("end_turn");
    await verdictOf(fx.daemon, c, "turn-ended");
    expect(forSession(c).map((r) => r.trigger)).toEqual(["context-warn", "turn-ended"]);
    await post(fx.daemon, `/sessions/${q}/stop`);
    await post(fx.daemon, `/sessions/${c}/stop`);
  });

  it.each([
    ["junk", { kind: "junk" } as const, /not JSON/],
    ["an oversized answer", { kind: "oversized" } as const, /over 65536 bytes/],
    ["a timeout", { kind: "hang" } as const, /did not answer within 1.5s/],
    ["a 500", { kind: "status", status: 500 } as const, /HTTP 500$/],
    ["a reset connection", { kind: "reset" } as const, /could not be reached/],
  ])("%s is recorded as judge_error and the session keeps working", async (_n, mode, reason) => {
    judge.mode = { kind: "verdict", verdict: "on_track", reason: "fine" };
    const id = await start(fx.daemon, { adapter: "echo", prompt: "first" });
    await verdictOf(fx.daemon, id, "turn-ended");
    judge.mode = mode;
    const r = await json(post(fx.daemon, `/sessions/${id}/judge`));
    expect(r.verdict).toMatchObject({ verdict: "judge_error", trigger: "request", model: "ext-latest" });
    expect(r.verdict.reason).toMatch(reason);
    expect(r.verdict.reason).not.toContain("echoing");
    const again = await json(post(fx.daemon, `/sessions/${id}/prompt`, { text: "still there?", wait: true }));
    expect(again.result).toMatchObject({ stopReason: "end_turn", text: "echo: still there?" });
    expect((await fx.daemon.fetch("/health", { auth: false })).status).toBeLessThan(500);
    await post(fx.daemon, `/sessions/${id}/stop`);
  });

  it("one judgement per session at a time: a second request waits for the first", async () => {
    judge.mode = { kind: "verdict", verdict: "on_track", reason: "fine" };
    const id = await start(fx.daemon, { adapter: "echo", prompt: "x" });
    await verdictOf(fx.daemon, id, "turn-ended");
    judge.mode = { kind: "hang" };
    const first = json(post(fx.daemon, `/sessions/${id}/judge`));
    await until(() => forSession(id).length === 2, "the first request at the judge");
    const second = json(post(fx.daemon, `/sessions/${id}/judge`));
    expect((await first).verdict.verdict).toBe("judge_error");
    expect((await second).verdict.verdict).toBe("judge_error");
    expect(forSession(id)).toHaveLength(3);
    expect(judge.maxOpen.get(id)).toBe(1);
    await post(fx.daemon, `/sessions/${id}/stop`);
  });
});

describe("the steward without a key", () => {
  const fx = useDaemonProcess({
    prefix: "svc-e2e-steward-nokey-",
    config: { acpAgents: FIXTURE_AGENTS, extJudge: { model: "j-1" } },
  });

  it("judges nothing, says so once in the log and in svc doctor; a request is refused naming the settings", async () => {
    const before = judge.requests.length;
    const id = await start(fx.daemon, { adapter: "echo", prompt: "one" });
    await json(post(fx.daemon, `/sessions/${id}/prompt`, { text: "two", wait: true }));
    await until(() => fx.daemon.logs().includes("steward: no judge key"), "the log line");
    const res = await post(fx.daemon, `/sessions/${id}/judge`);
    expect(res.status).toBe(503);
    const err = ((await res.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe("unavailable");
    expect(err.message).toContain("extJudge.apiKey");
    expect(err.message).toContain("EXT_JUDGE_API_KEY");
    const cli = await runCli(["sessions", "judge", id], { home: fx.home });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain("extJudge.apiKey");
    expect(fx.daemon.logs().split("steward: no judge key").length - 1).toBe(1);
    expect(judge.requests.length).toBe(before);
    const doctor = await runCli(["doctor", "--json"], { home: fx.home });
    const findings = JSON.parse(doctor.stdout).findings as Array<{ severity: string; message: string }>;
    expect(findings).toContainEqual(
      expect.objectContaining({
        severity: "warn",
        message: expect.stringContaining("the session steward has no judge key"),
      }),
    );
    await post(fx.daemon, `/sessions/${id}/stop`);
  });
});

describe("the steward through the llm-endpoint sidecar", () => {
  const fx = useDaemonProcess({
    prefix: "svc-e2e-steward-sidecar-",
    setup: async ({ home }) => {
      const { writeFile } = await import("node:fs/promises");
      await writeFile(
        join(home, "config.json"),
        JSON.stringify({
          acpAgents: FIXTURE_AGENTS,
          features: { llmEndpoint: true },
          llmEndpoint: { port: 0 },
          extJudge: { baseUrl: judge.baseUrl, model: "j-side", apiKey: KEY },
        }),
      );
    },
  });

  it("the judge call goes through the sidecar with the steward's own grant: the key injected there, the call in the usage", async () => {
    judge.mode = { kind: "verdict", verdict: "on_track", reason: "via the sidecar" };
    const id = await start(fx.daemon, { adapter: "echo", prompt: "hi" });
    await verdictOf(fx.daemon, id, "turn-ended");
    const r = await json(post(fx.daemon, `/sessions/${id}/judge`));
    expect(r.verdict).toMatchObject({ verdict: "on_track", reason: "via the sidecar", model: "j-side" });
    const req = forSession(id).at(-1)!;
    expect(req.path).toBe("/v1/chat/completions");
    expect(req.authorization).toBe(`Bearer ${KEY}`);
    expect(req.body.model).toBe("j-side");
    const usage = await until(async () => {
      const u = await json(fx.daemon.fetch("/llm-endpoint/usage"));
      return u.sessions?.steward?.calls >= 1 && u;
    }, "the steward's calls in the usage");
    expect(usage.sessions.steward).toMatchObject({ inputTokens: expect.any(Number) });
    const status = await json(fx.daemon.fetch("/llm-endpoint/status"));
    expect(JSON.stringify(status)).not.toContain(KEY);
    await post(fx.daemon, `/sessions/${id}/stop`);
    // A later daemon life shows the session from its record (session.json), its verdict from verdict.json.
    await fx.start();
    const show = await runCli(["sessions", "show", id], { home: fx.home });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^${id}  echo  ended `));
    expect(show.stdout).toContain("verdict: on_track (request");
  });
});
