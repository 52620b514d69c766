/**
 * Issue 25: the llm-endpoint sidecar in a real daemon. A real ACP agent process calls models with
 * the official SDKs reading only its environment; the calls reach a fake upstream (the providers
 * are remote services we cannot reach) with the key the daemon injects, while the agent's
 * environment holds no key. A session's token dies with the session; the sidecar killed with -9
 * comes back on the same port and calls resume; with the feature off nothing listens.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, readdir, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, useDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { startFakeLlmUpstream, type FakeLlmUpstream } from "../support/fake-llm-upstream.js";
import { fixtureAgent } from "../core/sessions/harness.js";
import { freePort } from "../support/http.js";
import { environOf, processAlive } from "../support/process-alive.js";

const ANTHROPIC_KEY = `sk-ant-e2e-${randomBytes(12).toString("hex")}`;
const OPENAI_KEY = `sk-proj-e2e-${randomBytes(12).toString("hex")}`;
const KEYS = [ANTHROPIC_KEY, OPENAI_KEY];

async function until<T>(probe: () => Promise<T | undefined | false>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const json = async (r: Promise<Response>): Promise<any> => {
  const res = await r;
  const text = await res.text();
  if (!res.ok) throw new Error(`${res.status}: ${text}`);
  return JSON.parse(text);
};

async function startSession(d: DaemonProcess, adapter: string): Promise<any> {
  const out = await json(
    d.fetch("/sessions", {
      method: "POST",
      body: JSON.stringify({ adapter, cwd: d.home }),
      headers: { "content-type": "application/json" },
    }),
  );
  return out.descriptor;
}

/** One turn of the llm-agent: the JSON it answered. */
async function ask(d: DaemonProcess, sessionId: string, req: Record<string, unknown>): Promise<any> {
  const out = await json(
    d.fetch(`/sessions/${sessionId}/prompt`, {
      method: "POST",
      body: JSON.stringify({ text: JSON.stringify(req), wait: true }),
      headers: { "content-type": "application/json" },
    }),
  );
  return JSON.parse(out.result.text);
}

const status = (d: DaemonProcess) => json(d.fetch("/llm-endpoint/status"));

/** A fake upstream for the enclosing describe, started before its daemon. */
function useFakeUpstream(): () => FakeLlmUpstream {
  let fake: FakeLlmUpstream | undefined;
  beforeAll(async () => {
    fake = await startFakeLlmUpstream();
  });
  afterAll(async () => fake?.close());
  return () => {
    if (!fake) throw new Error("the fake upstream is read before beforeAll ran");
    return fake;
  };
}

/**
 * A daemon with the llm-endpoint on and an anthropic route to a fake upstream (keyed by
 * `defaults.adapters.claude.auth`), whose `llm` agent writes the sidecar token it was given to a
 * file (`tokenFile()`; `agentToken()` waits for it). `extra` adds an openai route to the same
 * upstream, budgets, defaults, agents, top-level config keys and the daemon's environment.
 */
function useLlmDaemon(
  prefix: string,
  extra: {
    openai?: boolean;
    budgets?: object;
    defaults?: object;
    agents?: object;
    config?: object;
    env?: Record<string, string>;
  } = {},
) {
  const upstream = useFakeUpstream();
  let tokenFile = "";
  const fx = useDaemonProcess({
    prefix,
    ...(extra.env && { env: extra.env }),
    setup: async ({ home }) => {
      tokenFile = join(home, "token-seen-by-agent");
      const url = upstream().url;
      await writeFile(
        join(home, "config.json"),
        JSON.stringify({
          features: { llmEndpoint: true },
          llmEndpoint: {
            port: 0,
            upstreams: {
              anthropic: { provider: "anthropic", baseUrl: url, models: ["claude-*"] },
              ...(extra.openai && { openai: { provider: "openai", baseUrl: `${url}/v1`, models: ["gpt-*"] } }),
            },
            ...(extra.budgets && { budgets: extra.budgets }),
          },
          defaults: { adapters: { claude: { auth: { apiKey: ANTHROPIC_KEY } } }, ...extra.defaults },
          acpAgents: { llm: fixtureAgent("llm-agent.mjs", { env: { FX_TOKEN_FILE: tokenFile } }), ...extra.agents },
          ...extra.config,
        }),
      );
    },
  });
  const agentToken = () =>
    until(async () => (await readFile(tokenFile, "utf8")).trim() || undefined, "the agent to write its token");
  return { upstream, fx, tokenFile: () => tokenFile, agentToken };
}

describe("the llm-endpoint sidecar in a daemon (feature on)", () => {
  const { upstream, fx, tokenFile, agentToken } = useLlmDaemon("svc-e2e-llm-", {
    // The daemon's own environment holds the OpenAI key too: it must not reach a session either.
    env: { OPENAI_API_KEY: OPENAI_KEY },
    openai: true,
    config: { models: { "review.small": { model: "claude-haiku-4-5", route: "anthropic" } } },
    // A recipe that carries the key in its env: overwritten with the session's token.
    agents: {
      llmkeyed: fixtureAgent("llm-agent.mjs", { env: { ANTHROPIC_API_KEY: ANTHROPIC_KEY } }),
      // An agent whose recipe says the sidecar cannot serve it.
      ownhost: fixtureAgent("echo-agent.mjs", {
        modelProxy: { supported: false, why: "it reads its own host setting" },
      }),
    },
  });

  it("the sidecar runs on loopback, its status names where each key comes from and never a key", async () => {
    const s = await until(
      async () => ((await status(fx.daemon)).sidecar.state === "running" ? status(fx.daemon) : undefined),
      "the sidecar to run",
    );
    expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(s.routes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: "anthropic", key: "defaults.adapters.claude.auth.apiKey" }),
        expect.objectContaining({ name: "openai", key: "the daemon's OPENAI_API_KEY" }),
      ]),
    );
    for (const k of KEYS) expect(JSON.stringify(s)).not.toContain(k);
  });

  it.each([
    ["anthropic", false, "claude-sonnet-4-5"],
    ["anthropic", true, "claude-sonnet-4-5"],
    ["openai", false, "gpt-5"],
    ["openai", true, "gpt-5-mini"],
  ])(
    "a session's %s call (stream %s) reaches the upstream with the injected key, through the SDK reading only its env",
    async (api, stream, model) => {
      const d = await startSession(fx.daemon, "llm");
      const before = upstream().requests.length;
      const answer = await ask(fx.daemon, d.id, { api, stream, model });
      expect(answer, JSON.stringify(answer)).toMatchObject({ ok: true, text: upstream().reply });
      const seen = upstream().requests.slice(before);
      expect(seen).toHaveLength(1);
      const h = seen[0]!.headers;
      if (api === "anthropic") {
        expect(h["x-api-key"]).toBe(ANTHROPIC_KEY);
        expect(h["anthropic-version"]).toBeTruthy();
      } else expect(h.authorization).toBe(`Bearer ${OPENAI_KEY}`);
      const token = (await readFile(tokenFile(), "utf8")).trim();
      expect(JSON.stringify(h)).not.toContain(token);
      const desc = await until(async () => {
        const x = (await json(fx.daemon.fetch(`/sessions/${d.id}`))).descriptor;
        return x.modelUsage?.calls === 1 ? x : undefined;
      }, "the call on the descriptor");
      expect(desc.modelUsage).toMatchObject({ calls: 1, lastModel: model });
      expect(desc.modelUsage.inputTokens).toBeGreaterThan(0);
      await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });
    },
  );

  it("a session of an agent the sidecar cannot serve says so, and the status lists it while it runs", async () => {
    const d = fx.daemon;
    const session = await startSession(d, "ownhost");
    expect(session.info.modelProxy).toEqual({ proxied: false, why: "it reads its own host setting" });
    expect((await status(d)).notProxied).toEqual([
      { sessionId: session.id, adapter: "ownhost", why: "it reads its own host setting" },
    ]);
    const cli = await runCli(["llm-endpoint", "status"], { home: fx.home });
    expect(cli.stdout).toContain(`not proxied: session ${session.id} (ownhost): it reads its own host setting`);
    await d.fetch(`/sessions/${session.id}/stop`, { method: "POST" });
    expect((await status(d)).notProxied).toEqual([]);
  });

  it("a role name routes by the role's route and model", async () => {
    const d = await startSession(fx.daemon, "llm");
    const before = upstream().requests.length;
    expect(await ask(fx.daemon, d.id, { api: "anthropic", model: "role:review.small" })).toMatchObject({ ok: true });
    expect(upstream().requests[before]!.body.model).toBe("claude-haiku-4-5");
    await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });
  });

  it("no key reaches the session: not its process environment (inherited, recipe or auth), not its transcript, the logs or the listing", async () => {
    const d = await startSession(fx.daemon, "llmkeyed");
    expect(await ask(fx.daemon, d.id, { api: "anthropic", model: "claude-sonnet-4-5" })).toMatchObject({ ok: true });
    const env = environOf(d.pid);
    const port = new URL((await status(fx.daemon)).url).port;
    expect(env.ANTHROPIC_BASE_URL).toBe(`http://127.0.0.1:${port}`);
    expect(env.OPENAI_BASE_URL).toBe(`http://127.0.0.1:${port}/v1`);
    expect(env.ANTHROPIC_API_KEY).toMatch(/^svc_llm_[0-9a-f]{48}$/);
    expect(env.OPENAI_API_KEY).toBe(env.ANTHROPIC_API_KEY);
    const all = Object.values(env).join("\n");
    for (const k of KEYS) expect(all).not.toContain(k);
    await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });
    const listing = await runCli(["sessions", "list", "--json"], { home: fx.home });
    const transcript = await readFile(d.eventsPath, "utf8");
    const usageFiles = await readdir(join(fx.home, "llm-endpoint"));
    const usage = (await Promise.all(usageFiles.map((f) => readFile(join(fx.home, "llm-endpoint", f), "utf8")))).join(
      "",
    );
    expect(usage).toMatch(/^[0-9a-f]{8} \{/m);
    for (const k of [...KEYS, env.ANTHROPIC_API_KEY!]) {
      for (const [where, text] of [
        ["listing", listing.stdout],
        ["transcript", transcript],
        ["logs", fx.daemon.logs()],
        ["usage log", usage],
      ] as const) {
        expect(text.includes(k), `${where} holds a secret`).toBe(false);
      }
    }
  });

  it("a session's token works while the session lives and is refused (401) once it ended", async () => {
    await rm(tokenFile(), { force: true });
    const d = await startSession(fx.daemon, "llm");
    const token = await agentToken();
    const direct = new Anthropic({ baseURL: (await status(fx.daemon)).url, apiKey: token, maxRetries: 0 });
    const ok = await direct.messages.create({
      model: "claude-sonnet-4-5",
      max_tokens: 8,
      messages: [{ role: "user", content: "hi" }],
    });
    expect(ok.content[0]).toMatchObject({ type: "text" });
    await json(fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" }));
    await until(
      async () => (await json(fx.daemon.fetch(`/sessions/${d.id}`))).descriptor.state === "ended",
      "the session to end",
    );
    const err = await until(
      () =>
        direct.messages
          .create({ model: "claude-sonnet-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
          .then(
            () => undefined,
            (e: unknown) => e,
          ),
      "the token to be refused",
    );
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(401);
  });

  it("usage is counted per session and for the day, over REST, the CLI and the MCP tools", async () => {
    const d = await startSession(fx.daemon, "llm");
    await ask(fx.daemon, d.id, { api: "openai", model: "gpt-5" });
    const u = await until(async () => {
      const x = await json(fx.daemon.fetch(`/llm-endpoint/usage?sessionId=${d.id}`));
      return x.sessions[d.id]?.calls === 1 ? x : undefined;
    }, "the usage");
    expect(u.sessions[d.id]).toMatchObject({
      calls: 1,
      inputTokens: upstream().usage.openai.prompt_tokens,
      outputTokens: upstream().usage.openai.completion_tokens,
    });
    expect(u.day.calls).toBeGreaterThanOrEqual(1);
    const cli = await runCli(["llm-endpoint", "usage", "--session", d.id, "--json"], { home: fx.home });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).sessions[d.id].calls).toBe(1);
    const client = new Client({ name: "svc-llm-test", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["llm_endpoint_status", "llm_endpoint_usage", "llm_endpoint_start", "llm_endpoint_stop"]),
    );
    const viaMcp = await client.callTool({ name: "llm_endpoint_usage", arguments: { sessionId: d.id } });
    expect((viaMcp.structuredContent as any).sessions[d.id].calls).toBe(1);
    await client.close();
    await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });
  });

  it("the sidecar killed with -9 is back within seconds on the same port, and a live session's calls resume", async () => {
    const d = await startSession(fx.daemon, "llm");
    expect(await ask(fx.daemon, d.id, { api: "anthropic", model: "claude-sonnet-4-5" })).toMatchObject({ ok: true });
    const before = await status(fx.daemon);
    process.kill(before.sidecar.pid, "SIGKILL");
    const t0 = Date.now();
    const after = await until(async () => {
      const s = await status(fx.daemon);
      return s.sidecar.state === "running" && s.sidecar.pid !== before.sidecar.pid ? s : undefined;
    }, "the sidecar to come back");
    expect(Date.now() - t0).toBeLessThan(30_000);
    expect(after.url).toBe(before.url);
    expect(after.sidecar.restarts).toBe(before.sidecar.restarts + 1);
    expect(await ask(fx.daemon, d.id, { api: "anthropic", stream: true, model: "claude-sonnet-4-5" })).toMatchObject({
      ok: true,
      text: upstream().reply,
    });
    await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });
  });

  it("svc llm-endpoint stop and start (token only): sessions started meanwhile call directly; started again, it binds the same port", async () => {
    const before = await status(fx.daemon);
    expect((await fx.daemon.fetch("/llm-endpoint/stop", { method: "POST", auth: false })).status).toBe(401);
    const stop = await runCli(["llm-endpoint", "stop", "--json"], { home: fx.home });
    expect(stop.code, stop.stderr).toBe(0);
    expect(JSON.parse(stop.stdout)).toMatchObject({ enabled: false, sidecar: { state: "stopped" } });
    const d = await startSession(fx.daemon, "llm");
    expect(environOf(d.pid).ANTHROPIC_BASE_URL).toBeUndefined();
    await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });
    const start = await runCli(["llm-endpoint", "start"], { home: fx.home });
    expect(start.code, start.stderr).toBe(0);
    expect(start.stdout).toContain(`llm-endpoint: running at ${before.url}`);
  });

  it("the sidecar ends with the daemon, also when the daemon is killed with -9", async () => {
    const pid = (await status(fx.daemon)).sidecar.pid as number;
    await fx.daemon.kill9();
    await until(async () => !processAlive(pid), "the orphaned sidecar to exit", 20_000);
    const d2 = await fx.start();
    const pid2 = await until(async () => (await status(d2)).sidecar.pid as number | undefined, "the new sidecar");
    await d2.stop();
    await until(async () => !processAlive(pid2), "the sidecar to stop with the daemon", 20_000);
  });
});

describe("budgets across the daemon (feature on)", () => {
  // 32 tokens a call (25 in, 7 out), each reserving 87 while in flight (its 92-byte body / 4,
  // rounded up, + max_tokens 64): a session fits one call (32 + 87 > 100), the day two (64 + 87 > 130).
  const { fx } = useLlmDaemon("svc-e2e-llm-budget-", { budgets: { sessionTokens: 100, dayTokens: 130 } });

  it("a session past its token budget is refused with 403 its SDK understands, said in its transcript; the day's budget holds across a daemon restart", async () => {
    const a = await startSession(fx.daemon, "llm");
    expect(await ask(fx.daemon, a.id, { api: "anthropic", model: "claude-sonnet-4-5" })).toMatchObject({ ok: true });
    const refused = await ask(fx.daemon, a.id, { api: "anthropic", model: "claude-sonnet-4-5" });
    expect(refused).toMatchObject({ ok: false, status: 403, type: "PermissionDeniedError" });
    expect(refused.message).toContain("llmEndpoint.budgets.sessionTokens");
    const lines = await until(async () => {
      const t = (await readFile(a.eventsPath, "utf8"))
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const hit = t.filter((l: any) => l.type === "llm.refused");
      return hit.length ? hit : undefined;
    }, "the refusal in the transcript");
    expect(lines[0]).toMatchObject({ data: { reason: "session-budget", status: 403 } });
    await fx.daemon.fetch(`/sessions/${a.id}/stop`, { method: "POST" });
    // A second session: its own budget is fresh, and it uses the day's second call.
    const b = await startSession(fx.daemon, "llm");
    expect(await ask(fx.daemon, b.id, { api: "anthropic", model: "claude-sonnet-4-5" })).toMatchObject({ ok: true });
    await fx.daemon.fetch(`/sessions/${b.id}/stop`, { method: "POST" });
    // The day's 64 tokens are in the usage log: a restarted daemon refuses the next session's first call.
    const d2 = await fx.start();
    await until(async () => (await status(d2)).sidecar.state === "running", "the sidecar after the restart");
    const c = await startSession(d2, "llm");
    const dayRefused = await ask(d2, c.id, { api: "anthropic", model: "claude-sonnet-4-5" });
    expect(dayRefused).toMatchObject({ ok: false, status: 403 });
    expect(dayRefused.message).toContain("llmEndpoint.budgets.dayTokens");
  });
});

describe("a call cut before its usage arrived (feature on)", () => {
  const { upstream, fx, agentToken } = useLlmDaemon("svc-e2e-llm-cut-", { budgets: { dayTokens: 200 } });

  it("is charged its reservation as estimatedTokens, which the day's budget still counts after a daemon restart", async () => {
    const s = await until(
      async () => ((await status(fx.daemon)).sidecar.state === "running" ? status(fx.daemon) : undefined),
      "the sidecar to run",
    );
    const a = await startSession(fx.daemon, "llm");
    const token = await agentToken();
    const client = new Anthropic({ baseURL: s.url, apiKey: token, maxRetries: 0 });
    const held = upstream().holdAnswers();
    const ac = new AbortController();
    const cut = client.messages
      .create(
        { model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] },
        { signal: ac.signal },
      )
      .catch((e: unknown) => e);
    const req = await upstream().request(1);
    ac.abort();
    expect(await req.ended).toBe("closed-by-client");
    held.release();
    await cut;
    // Its reservation: ceil(body bytes / 4) + max_tokens (121).
    const reserved = Math.ceil(Number(req.headers["content-length"]) / 4) + 100;
    const usage = await until(async () => {
      const u = await json(fx.daemon.fetch("/llm-endpoint/usage"));
      return u.day.calls === 1 ? u : undefined;
    }, "the cut call in the day's usage");
    expect(usage.day).toMatchObject({ inputTokens: 0, outputTokens: 0, estimatedTokens: reserved });
    await fx.daemon.fetch(`/sessions/${a.id}/stop`, { method: "POST" });
    // From the usage log after a restart: the day has 121 charged, and a call reserving 87 would pass 200.
    const d2 = await fx.start();
    await until(async () => (await status(d2)).sidecar.state === "running", "the sidecar after the restart");
    const b = await startSession(d2, "llm");
    const refused = await ask(d2, b.id, { api: "anthropic", model: "claude-sonnet-4-5" });
    expect(refused).toMatchObject({ ok: false, status: 403 });
    expect(refused.message).toContain(`today (UTC ${usage.day.date}) has used ${reserved} tokens`);
    expect(refused.message).toContain("llmEndpoint.budgets.dayTokens");
  });
});

describe("the llm-endpoint with the feature off", () => {
  let port = 0;
  const fx = useDaemonProcess({
    prefix: "svc-e2e-llm-off-",
    setup: async ({ home }) => {
      port = await freePort();
      await writeFile(
        join(home, "config.json"),
        JSON.stringify({ llmEndpoint: { port }, acpAgents: { llm: fixtureAgent("llm-agent.mjs") } }),
      );
    },
  });

  it("binds no port, starts no process, serves no route or tool, and leaves a session's environment alone", async () => {
    const refused = await new Promise<string>((resolve) => {
      const s = createServer();
      s.once("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
      s.listen(port, "127.0.0.1", () => s.close(() => resolve("free")));
    });
    expect(refused).toBe("free");
    let children = "";
    try {
      children = execFileSync("ps", ["-o", "args=", "--ppid", String(fx.daemon.child.pid)]).toString();
    } catch {
      // ps exits 1 when the daemon has no child process at all
    }
    expect(children).not.toContain("llm-endpoint");
    expect((await fx.daemon.fetch("/llm-endpoint/status")).status).toBe(404);
    const cli = await runCli(["llm-endpoint", "status"], { home: fx.home });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain("features.llmEndpoint");
    const d = await startSession(fx.daemon, "llm");
    expect(environOf(d.pid).ANTHROPIC_BASE_URL).toBeUndefined();
    await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });
  });

  it("turned on in config.json, the sidecar starts without a daemon restart on the configured port; turned off, it stops", async () => {
    const on = await runCli(["config", "set", "features.llmEndpoint", "true"], { home: fx.home });
    expect(on.code, on.stderr).toBe(0);
    const running = await until(async () => {
      const res = await fx.daemon.fetch("/llm-endpoint/status");
      const s: any = res.ok ? await res.json() : undefined;
      return s?.sidecar.state === "running" ? s : undefined;
    }, "the sidecar to start");
    expect(running.url).toBe(`http://127.0.0.1:${port}`);
    const off = await runCli(["config", "set", "features.llmEndpoint", "false"], { home: fx.home });
    expect(off.code, off.stderr).toBe(0);
    await until(async () => (await status(fx.daemon)).sidecar.state === "stopped", "the sidecar to stop");
    await until(async () => !processAlive(running.sidecar.pid), "the sidecar process to end");
  });
});

describe("the context policy acts on what the sidecar sees (feature on)", () => {
  const { upstream, fx, agentToken } = useLlmDaemon("svc-e2e-llm-ctx-", {
    defaults: { contextContinuity: { warnAtPct: 50, hardStopAtPct: 90 } },
  });

  const transcript = async (path: string) =>
    (await readFile(path, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; data: any });
  const descriptor = async (id: string) => (await json(fx.daemon.fetch(`/sessions/${id}`))).descriptor;

  it("a call past warnAtPct warns once per crossing; past hardStopAtPct the session refuses prompts and the sidecar refuses its token", async () => {
    const d = await startSession(fx.daemon, "llm");
    const token = await agentToken();
    // claude-sonnet-4-5 has a 200,000-token window: 120,000 input tokens are 60%.
    upstream().usage.anthropic = {
      input_tokens: 100_000,
      cache_read_input_tokens: 20_000,
      cache_creation_input_tokens: 0,
      output_tokens: 10,
    };
    expect(await ask(fx.daemon, d.id, { api: "anthropic", model: "claude-sonnet-4-5" })).toMatchObject({ ok: true });
    await until(async () => (await descriptor(d.id)).context?.pct === 60, "the context use on the descriptor");
    expect(await ask(fx.daemon, d.id, { api: "anthropic", model: "claude-sonnet-4-5" })).toMatchObject({ ok: true });
    await until(async () => (await descriptor(d.id)).modelUsage?.calls === 2, "the second call counted");
    const warns = (await transcript(d.eventsPath)).filter((l) => l.type === "context.warn");
    expect(warns).toHaveLength(1);
    expect(warns[0]!.data).toMatchObject({
      sessionId: d.id,
      pct: 60,
      threshold: "warnAtPct",
      model: "claude-sonnet-4-5",
      window: 200_000,
    });
    // 185,000 tokens: 92.5%, past the hard stop.
    upstream().usage.anthropic = {
      input_tokens: 185_000,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      output_tokens: 10,
    };
    await fx.daemon.fetch(`/sessions/${d.id}/prompt`, {
      method: "POST",
      body: JSON.stringify({ text: JSON.stringify({ api: "anthropic", model: "claude-sonnet-4-5" }), wait: true }),
      headers: { "content-type": "application/json" },
    });
    const stop = await until(
      async () => (await transcript(d.eventsPath)).find((l) => l.type === "context.hard-stop"),
      "the hard stop",
    );
    expect(stop.data).toMatchObject({ pct: 92.5, threshold: "hardStopAtPct" });
    const refused = await fx.daemon.fetch(`/sessions/${d.id}/prompt`, {
      method: "POST",
      body: JSON.stringify({ text: "more" }),
      headers: { "content-type": "application/json" },
    });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("defaults.contextContinuity.hardStopAtPct");
    const direct = new Anthropic({ baseURL: (await status(fx.daemon)).url, apiKey: token, maxRetries: 0 });
    const err = await until(
      () =>
        direct.messages
          .create({ model: "claude-sonnet-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] })
          .then(
            () => undefined,
            (e: unknown) => e,
          ),
      "the sidecar to refuse the session",
    );
    expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(String((err as Error).message)).toContain("hardStopAtPct");
    expect((await transcript(d.eventsPath)).filter((l) => l.type === "context.hard-stop")).toHaveLength(1);
  });
});

describe("a turn whose every model call fails (feature on)", () => {
  const { upstream, fx } = useLlmDaemon("svc-e2e-llm-fail-", { config: { sessions: { attentionDelaySec: 0 } } });
  const call = JSON.stringify({ api: "anthropic", model: "claude-sonnet-4-5" });

  it("ends as an error though the agent said end_turn; the session shows attention; a swarm step with it fails", async () => {
    upstream().setMode({ kind: "status", status: 503 });
    const d = await startSession(fx.daemon, "llm");
    const out = await json(
      fx.daemon.fetch(`/sessions/${d.id}/prompt`, {
        method: "POST",
        body: JSON.stringify({ text: call, wait: true }),
        headers: { "content-type": "application/json" },
      }),
    );
    const error = "every model call of this turn failed (1 call): status 503";
    expect(JSON.parse(out.result.text)).toMatchObject({ ok: false, status: 503 });
    expect(out.result).toMatchObject({ stopReason: "end_turn", error });
    const desc = (await json(fx.daemon.fetch(`/sessions/${d.id}`))).descriptor;
    expect(desc).toMatchObject({ activity: "attention", lastStopReason: "end_turn", lastTurnErrorMessage: error });
    expect(desc.modelUsage).toMatchObject({ calls: 1, failed: 1 });
    const turnEnd = (await readFile(d.eventsPath, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.type === "turn.failed");
    expect(turnEnd?.data).toMatchObject({ stopReason: "end_turn", error });
    await fx.daemon.fetch(`/sessions/${d.id}/stop`, { method: "POST" });

    const file = join(fx.home, "dead-upstream.swarm.json");
    await writeFile(
      file,
      JSON.stringify({
        schema: "svc/swarm/v1",
        name: "dead",
        steps: [{ id: "a", model: "x", adapter: "llm", prompt: call }],
      }),
    );
    const r = await runCli(["run-swarm", file, "--json"], { home: fx.home, cwd: fx.home });
    expect(r.code, r.stderr).toBe(1);
    const { run } = JSON.parse(r.stdout);
    expect(run.state).toBe("failed");
    expect(run.steps.a).toMatchObject({ state: "failed", stopReason: "end_turn", error });
  });
});
