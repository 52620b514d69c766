import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { bootId, readProcStatSync } from "../../../core/sessions/process-mark.js";
import { readTranscript } from "../../../core/sessions/transcript-reader.js";
import { LOGGER, resolve } from "../../../core/tokens.js";
import { FIXTURE_AGENTS, fixtureAgent, makeHarness, until, type Harness } from "./harness.js";

let h: Harness;
afterEach(async () => {
  vi.unstubAllEnvs();
  await h?.cleanup();
});

describe("session runtime with real ACP agents", () => {
  it("starts an agent, runs a prompt, streams updates into events.jsonl under $SVC_HOME/sessions", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    expect(descriptor.eventsPath).toBe(join(h.home, "sessions", descriptor.id, "events.jsonl"));
    expect(descriptor).toMatchObject({ adapter: "echo", source: "config", kind: "agent", state: "idle" });
    expect(descriptor.info).toMatchObject({ agent: { name: "echo-agent" } });
    const receipt = h.runtime.prompt(descriptor.id, "hello", { sender: { kind: "human" }, urgency: "queue" });
    expect(receipt.delivery).toBe("started");
    const result = await h.runtime.waitFor(descriptor.id, receipt.promptId);
    expect(result).toMatchObject({ stopReason: "end_turn", text: "echo: hello" });
    await h.runtime.get(descriptor.id).transcript.flushed();
    const lines = await readTranscript(descriptor.eventsPath);
    const types = lines.map((l) => l.type);
    expect(types).toEqual(
      expect.arrayContaining([
        "session.starting",
        "session.started",
        "prompt.received",
        "prompt",
        "update",
        "turn.ended",
      ]),
    );
    expect(lines.find((l) => l.type === "update")?.data).toMatchObject({ kind: "agent_message_chunk" });
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
    expect(h.events.map((e) => e.type)).toEqual(expect.arrayContaining(["session:started", "session:turn-ended"]));
  });

  it("resolves a relative sessions.eventsDir against the home directory", async () => {
    h = await makeHarness({ sessions: { eventsDir: "transcripts" } });
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    expect(descriptor.eventsPath).toBe(join(h.home, "transcripts", descriptor.id, "events.jsonl"));
  });

  it("applies the defaults merge at start and never writes the auth secret anywhere", async () => {
    const secret = "sk-test-DO-NOT-LEAK-0123456789";
    h = await makeHarness({
      defaults: {
        options: { model: "base", verbose: true },
        skills: ["global-skill"],
        adapters: {
          echo: { options: { model: "echo-model" }, skills: ["echo-skill"], auth: { mode: "api-key", apiKey: secret } },
        },
      },
    });
    const { descriptor } = await h.runtime.start({
      adapter: "echo",
      cwd: h.home,
      options: { temperature: 0 },
      prompt: "env?",
    });
    expect(descriptor.options).toEqual({ model: "echo-model", verbose: true, temperature: 0 });
    expect(descriptor.skills).toEqual(["global-skill", "echo-skill"]);
    expect(descriptor.auth).toEqual({ mode: "api-key", hasApiKey: true });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.turns === 1, "first turn");
    const report = JSON.parse([...s.results.values()][0]!.text);
    expect(report).toMatchObject({
      hasKey: true,
      keyLength: secret.length,
      meta: { options: descriptor.options, skills: descriptor.skills },
    });
    await s.transcript.flushed();
    expect(await readFile(descriptor.eventsPath, "utf8")).not.toContain(secret);
    expect(JSON.stringify(h.runtime.list())).not.toContain(secret);
    expect(JSON.stringify(h.events)).not.toContain(secret);
  });

  it.each([
    {
      what: "its configured key",
      secret: "sk-leak-DO-NOT-SHOW-9876543210",
      config: (secret: string) => ({
        acpAgents: { leak: fixtureAgent("leak-agent.mjs") },
        defaults: { adapters: { leak: { auth: { mode: "api-key", apiKey: secret } } } },
      }),
    },
    {
      what: "a key it inherited from the daemon's environment",
      secret: "sk-inherited-DO-NOT-SHOW-2468",
      config: (secret: string) => {
        vi.stubEnv("SOME_PROVIDER_API_KEY", secret);
        return {
          acpAgents: { leak: fixtureAgent("leak-agent.mjs", { env: { LEAK_AGENT_VAR: "SOME_PROVIDER_API_KEY" } }) },
        };
      },
    },
  ])(
    "an agent that prints $what to stderr and exits 1 leaks it nowhere: listing, transcript, turn, events, log",
    async ({ secret, config }) => {
      h = await makeHarness(config(secret));
      const { descriptor } = await h.runtime.start({ adapter: "leak", cwd: h.home });
      const p = h.runtime.prompt(descriptor.id, "go", { sender: { kind: "human" }, urgency: "queue" });
      const r = await h.runtime.waitFor(descriptor.id, p.promptId);
      const s = h.runtime.get(descriptor.id);
      await until(() => s.state === "ended", "the session ended");
      await s.closing;
      expect(r.stopReason).toBe("error");
      expect(r.error).toMatch(/exited \(code 1/);
      expect(r.error).toContain("auth failed for key [redacted]");
      expect(s.exit?.error).toContain("retry with token=[redacted]");
      expect(JSON.stringify(r)).not.toContain(secret);
      expect(JSON.stringify(h.runtime.list())).not.toContain(secret);
      expect(await readFile(descriptor.eventsPath, "utf8")).not.toContain(secret);
      expect(JSON.stringify(h.events)).not.toContain(secret);
      expect(h.events.map((e) => e.type)).toContain("session:ended");
      expect((resolve(h.c, LOGGER) as unknown as { lines: string[] }).lines.join("\n")).not.toContain(secret);
    },
  );

  it("an agent that prints its token to stderr and dies before initialize fails the start without the token", async () => {
    const secret = "tok-leak-DO-NOT-SHOW-1234567890";
    h = await makeHarness({
      acpAgents: { leak: fixtureAgent("leak-agent.mjs", { env: { LEAK_AGENT_AT: "start" } }) },
      defaults: { adapters: { leak: { auth: { mode: "subscription", token: secret } } } },
    });
    const err = await h.runtime.start({ adapter: "leak", cwd: h.home }).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/exited \(code 1.*\[redacted\]/);
    expect(err?.message).not.toContain(secret);
    const [s] = h.runtime.list();
    expect(s?.exit?.error).toBeDefined();
    expect(JSON.stringify(h.runtime.list())).not.toContain(secret);
    await h.runtime.get(s!.id).closing;
    expect(await readFile(s!.eventsPath, "utf8")).not.toContain(secret);
    expect(JSON.stringify(h.events)).not.toContain(secret);
    expect((resolve(h.c, LOGGER) as unknown as { lines: string[] }).lines.join("\n")).not.toContain(secret);
  });

  it("queues a prompt behind an in-flight turn, in order", async () => {
    h = await makeHarness({
      acpAgents: { slow: { ...FIXTURE_AGENTS.slow, env: { SLOW_AGENT_TICKS: "5", SLOW_AGENT_INTERVAL_MS: "40" } } },
    });
    const { descriptor } = await h.runtime.start({ adapter: "slow", cwd: h.home });
    const first = h.runtime.prompt(descriptor.id, "one", { sender: { kind: "human" }, urgency: "queue" });
    await until(() => h.runtime.get(descriptor.id).state === "busy", "busy");
    const second = h.runtime.prompt(descriptor.id, "two", { sender: { kind: "human" }, urgency: "queue" });
    expect(second).toMatchObject({ delivery: "queued", position: 0 });
    expect(h.runtime.describe(h.runtime.get(descriptor.id)).pendingPrompts).toHaveLength(1);
    const r1 = await h.runtime.waitFor(descriptor.id, first.promptId);
    expect(r1.stopReason).toBe("end_turn");
    expect(r1.text).toContain("done one");
    const r2 = await h.runtime.waitFor(descriptor.id, second.promptId);
    expect(r2.text).toContain("start two");
  });

  it("an interrupt cancels the in-flight turn and runs at once", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "slow", cwd: h.home });
    const first = h.runtime.prompt(descriptor.id, "long", { sender: { kind: "human" }, urgency: "queue" });
    await until(() => h.runtime.get(descriptor.id).turnHadOutput, "first output");
    const second = h.runtime.prompt(descriptor.id, "urgent", { sender: { kind: "human" }, urgency: "interrupt" });
    expect(second.delivery).toBe("interrupted");
    const r1 = await h.runtime.waitFor(descriptor.id, first.promptId);
    expect(r1.stopReason).toBe("cancelled");
    expect(r1.text).not.toContain("done long");
    const r2 = await h.runtime.waitFor(descriptor.id, second.promptId);
    expect(r2.text).toContain("start urgent");
  });

  it("a crashing agent ends the session with its exit and fails the turn instead of hanging", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "crash", cwd: h.home });
    const p = h.runtime.prompt(descriptor.id, "go", { sender: { kind: "human" }, urgency: "queue" });
    const r = await h.runtime.waitFor(descriptor.id, p.promptId);
    expect(r.stopReason).toBe("error");
    expect(r.error).toMatch(/exited \(code 3/);
    const d = h.runtime.describe(h.runtime.get(descriptor.id));
    expect(d.state).toBe("ended");
    expect(d.exit).toMatchObject({ code: 3 });
    expect(() => h.runtime.prompt(descriptor.id, "again", { sender: { kind: "human" }, urgency: "queue" })).toThrow(
      /has ended/,
    );
    expect(h.events.map((e) => e.type)).toContain("session:ended");
  });

  it("an agent whose binary is missing fails the start with the install hint", async () => {
    h = await makeHarness({
      acpAgents: { ghost: { bin: "svc-no-such-agent-bin", install_hint: "npm i -g ghost-agent" } },
    });
    await expect(h.runtime.start({ adapter: "ghost", cwd: h.home })).rejects.toThrow(
      /svc-no-such-agent-bin is not on PATH; install it: npm i -g ghost-agent/,
    );
  });

  it("rejects an unknown adapter, a relative cwd and a missing directory", async () => {
    h = await makeHarness();
    await expect(h.runtime.start({ adapter: "nope", cwd: h.home })).rejects.toMatchObject({ code: "not_found" });
    await expect(h.runtime.start({ adapter: "echo", cwd: "rel/dir" })).rejects.toMatchObject({ code: "invalid_input" });
    await expect(h.runtime.start({ adapter: "echo", cwd: join(h.home, "missing") })).rejects.toMatchObject({
      code: "invalid_input",
    });
  });

  it.runIf(existsSync("/proc/self/stat"))(
    "session.started records the process's start time and group and the daemon's own mark, so a later daemon life can recognise them",
    async () => {
      h = await makeHarness();
      const { descriptor: agent } = await h.runtime.start({ adapter: "echo", cwd: h.home });
      const { descriptor: term } = await h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["sleep", "600"] });
      const daemon = { pid: process.pid, startTime: readProcStatSync(process.pid)!.startTime, bootId: bootId() };
      for (const [d, group] of [
        [agent, false],
        [term, true],
      ] as const) {
        await h.runtime.get(d.id).transcript.flushed();
        const started = (await readTranscript(d.eventsPath)).find((l) => l.type === "session.started");
        expect(started?.data).toMatchObject({
          pid: d.pid,
          process: { startTime: readProcStatSync(d.pid!)!.startTime, bootId: bootId(), group },
          daemon,
        });
      }
    },
  );

  it("stop ends the agent process", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    const stopped = await h.runtime.stop(descriptor.id);
    expect(stopped.state).toBe("ended");
    expect(() => process.kill(descriptor.pid!, 0)).toThrow();
    expect(stopped.exit).toMatchObject({ error: "stopped" });
    h.clock.advance(61_000);
    expect(h.runtime.describe(h.runtime.get(descriptor.id)).activity).toBe("ended");
    const ended = (await readTranscript(descriptor.eventsPath)).find((l) => l.type === "session.ended");
    expect(ended?.data).toMatchObject({ error: "stopped" });
    expect(h.events.find((e) => e.type === "session:ended")).toMatchObject({ data: { exit: { error: "stopped" } } });
  });
});
