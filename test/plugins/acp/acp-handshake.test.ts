import { readFile } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { FIXTURE_AGENTS, fixtureAgent, makeHarness, until, type Harness } from "../../core/sessions/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const CODEX_LIKE_METHODS = JSON.stringify([
  { id: "api-key", name: "API key", description: "Reads OPENAI_API_KEY" },
  { id: "chat-gpt", name: "ChatGPT login" },
]);

/** A harness whose `hs` agent is the handshake fixture with `env` (and `extra` recipe fields). */
async function handshake(env: Record<string, string>, extra: Record<string, unknown> = {}) {
  h = await makeHarness({
    acpAgents: { ...FIXTURE_AGENTS, hs: fixtureAgent("handshake-agent.mjs", { env, ...extra }) },
  });
  return h;
}

/** Starts an `hs` session (options as given) and runs one prompt: the agent's JSON answer. */
async function startAndAsk(options: Record<string, string> = {}) {
  const { descriptor } = await h!.runtime.start({ adapter: "hs", cwd: h!.home, options });
  const ready = await h!.runtime.ready(descriptor.id);
  const p = h!.runtime.prompt(descriptor.id, "which model?", { sender: { kind: "human" }, urgency: "queue" });
  const r = await h!.runtime.waitFor(descriptor.id, p.promptId);
  return { descriptor: ready, answer: JSON.parse(r.text) as Record<string, unknown> };
}

/** The session's "model not applied" note. */
function noteOf(d: { info?: Record<string, unknown> }): string | undefined {
  return (d.info?.model as { note?: string } | undefined)?.note;
}

/** Starts an `hs` session that must fail: its error and the session as it ended. */
async function failedStart() {
  const err = await h!.runtime.start({ adapter: "hs", cwd: h!.home }).then(
    () => undefined,
    (e: Error & { details?: unknown }) => e,
  );
  expect(err, "the start should have failed").toBeDefined();
  const [session] = h!.runtime.list().filter((s) => s.adapter === "hs");
  await until(() => h!.runtime.get(session!.id).state === "ended", "the failed session to end");
  const live = h!.runtime.get(session!.id);
  await live.transcript.flushed();
  return { err: err!, ended: h!.runtime.describe(live), transcript: await readFile(session!.eventsPath, "utf8") };
}

describe("ACP start errors: the agent's own error, not a SIGKILL", () => {
  it("carries the JSON-RPC error of session/new (code, message, data), the stderr tail and the recipe's hint", async () => {
    await handshake(
      {
        FX_NEW_ERROR: JSON.stringify({
          code: -32603,
          message: "Internal error",
          data: { details: "process exited with code 1" },
        }),
        FX_STDERR: "--dangerously-skip-permissions cannot be used with root privileges",
      },
      { startHints: [{ match: "root privileges", hint: "running as root: set acpAgents.hs.env.IS_SANDBOX to 1" }] },
    );
    const { err, ended, transcript } = await failedStart();
    expect(err.message).toContain('ACP agent "hs" refused session/new: Internal error (code -32603');
    expect(err.message).toContain("process exited with code 1");
    expect(err.message).toContain("root privileges");
    expect(err.message).toContain("set acpAgents.hs.env.IS_SANDBOX to 1");
    expect(err.message).not.toContain("SIGKILL");
    expect(err.details).toMatchObject({ agentError: { code: -32603, message: "Internal error" } });
    // The process that answered was asked to end (SIGTERM), not killed; the session says why.
    expect(ended.exit?.signal).not.toBe("SIGKILL");
    expect(ended.exit?.error).toContain("refused session/new: Internal error");
    expect(transcript).toContain("refused session/new: Internal error");
  });

  it("says that authentication is required, with the agent's methods and where the key goes", async () => {
    await handshake({ FX_AUTH_METHODS: CODEX_LIKE_METHODS, FX_AUTH_REQUIRED: "1", OPENAI_API_KEY: "" });
    const { err } = await failedStart();
    expect(err.message).toContain("refused session/new: Authentication required (code -32000");
    expect(err.message).toContain("defaults.adapters.hs.auth.apiKey");
    expect(err.message).toContain("api-key (API key), chat-gpt (ChatGPT login)");
  });

  it("an agent that exits during initialize still reads as its exit with its stderr", async () => {
    await handshake({ FX_INIT_EXIT: "1", FX_STDERR: "fatal: no config" });
    const { err } = await failedStart();
    expect(err.message).toMatch(/exited \(code 1, signal null\): fatal: no config/);
  });

  it("never shows the key it was started with", async () => {
    const key = "sk-handshake-secret-1234567890";
    await handshake({
      OPENAI_API_KEY: key,
      FX_NEW_ERROR: JSON.stringify({ code: -32603, message: `bad key ${key}`, data: { key } }),
      FX_STDERR: `using ${key}`,
    });
    const { err, ended, transcript } = await failedStart();
    for (const text of [err.message, JSON.stringify(err.details), JSON.stringify(ended), transcript])
      expect(text).not.toContain(key);
  });
});

describe("ACP authenticate", () => {
  it("authenticates with the agent's api-key method when svc holds a key, before session/new", async () => {
    await handshake(
      { FX_AUTH_METHODS: CODEX_LIKE_METHODS, FX_AUTH_REQUIRED: "1", OPENAI_API_KEY: "sk-test-key" },
      { apiKeyEnv: "OPENAI_API_KEY" },
    );
    const { descriptor, answer } = await startAndAsk();
    expect(answer.authed).toBe("api-key");
    expect(descriptor.info).toMatchObject({ authMethod: "api-key" });
  });

  it("uses the recipe's auth.method, and refuses one the agent does not offer, listing what it offers", async () => {
    await handshake({ FX_AUTH_METHODS: CODEX_LIKE_METHODS }, { auth: { method: "chat-gpt" } });
    expect((await startAndAsk()).answer.authed).toBe("chat-gpt");
    await h!.cleanup();
    await handshake({ FX_AUTH_METHODS: CODEX_LIKE_METHODS }, { auth: { method: "oauth" } });
    const { err } = await failedStart();
    expect(err.message).toContain('auth.method is "oauth", which the agent does not offer');
    expect(err.message).toContain("api-key (API key), chat-gpt (ChatGPT login)");
  });

  it("does not authenticate when it holds no key, or when the recipe says none", async () => {
    await handshake({ FX_AUTH_METHODS: CODEX_LIKE_METHODS, OPENAI_API_KEY: "sk-x" }, { auth: { method: "none" } });
    expect((await startAndAsk()).answer.authed).toBeNull();
  });
});

describe("ACP model choice: the requested model reaches the agent", () => {
  it("through a session config option of category model", async () => {
    await handshake({ FX_MODELS: "config" });
    const { descriptor, answer } = await startAndAsk({ model: "small-1" });
    expect(answer.model).toBe("small-1");
    expect(descriptor.info?.model).toEqual({
      requested: "small-1",
      applied: true,
      via: "config-option",
      current: "small-1",
    });
  });

  it("through session/set_model where the agent offers models", async () => {
    await handshake({ FX_MODELS: "models" });
    const { descriptor, answer } = await startAndAsk({ model: "Small" });
    expect(answer.model).toBe("small-1");
    expect(descriptor.info?.model).toMatchObject({ applied: true, via: "set-model", current: "small-1" });
  });

  it("through the recipe's selectModel (env and args) when the agent offers no choice", async () => {
    await handshake({ FX_MODEL_ENV: "HS_MODEL" }, { selectModel: { env: "HS_MODEL", args: ["--model", "{model}"] } });
    const { descriptor, answer } = await startAndAsk({ model: "tiny-9" });
    expect(answer.envModel).toBe("tiny-9");
    expect(answer.args).toEqual(["--model", "tiny-9"]);
    expect(descriptor.info?.model).toMatchObject({ requested: "tiny-9", applied: true, via: "recipe" });
  });

  it('says "model not applied (agent default: X)" when nothing can apply it', async () => {
    await handshake({ FX_MODELS: "config" });
    const { descriptor, answer } = await startAndAsk({ model: "huge-7" });
    expect(answer.model).toBe("big-1");
    expect(descriptor.info?.model).toMatchObject({ requested: "huge-7", applied: false, current: "big-1" });
    expect(noteOf(descriptor)).toMatch(
      /^model not applied \(agent default: big-1\): not among the agent's models; it offers big-1, small-1$/,
    );
    await h!.cleanup();
    await handshake({});
    const plain = await startAndAsk({ model: "huge-7" });
    expect(noteOf(plain.descriptor)).toBe(
      "model not applied (agent default: unknown): the agent offers no model choice",
    );
  });

  it("reports an agent that refuses the switch, and keeps the session", async () => {
    await handshake({ FX_MODELS: "config", FX_REFUSE_MODEL: "1" });
    const { descriptor, answer } = await startAndAsk({ model: "small-1" });
    expect(answer.model).toBe("big-1");
    expect(noteOf(descriptor)).toMatch(/the agent refused it: .*model switching is disabled/);
  });
});

describe("an agent the model proxy cannot serve", () => {
  it("says so in the session's info (and so in its transcript)", async () => {
    await handshake({}, { modelProxy: { supported: false, why: "it reads its own host setting" } });
    const { descriptor } = await startAndAsk();
    expect(descriptor.info?.modelProxy).toEqual({ proxied: false, why: "it reads its own host setting" });
    await h!.runtime.get(descriptor.id).transcript.flushed();
    expect(await readFile(descriptor.eventsPath, "utf8")).toContain("it reads its own host setting");
  });
});

describe("ACP permission requests", () => {
  it("records the option svc chose in the transcript", async () => {
    await handshake({ FX_PERMISSION: "1" });
    const { descriptor, answer } = await startAndAsk();
    expect(answer.permission).toEqual({ outcome: "selected", optionId: "allow" });
    await h!.runtime.get(descriptor.id).transcript.flushed();
    const lines = (await readFile(descriptor.eventsPath, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const decision = lines.find((l) => JSON.stringify(l).includes("permission_decision"));
    expect(JSON.stringify(decision)).toContain('"optionId":"allow"');
    expect(JSON.stringify(decision)).toContain('"kind":"allow_once"');
  });
});
