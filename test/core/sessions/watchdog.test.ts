import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG, resolve } from "../../../core/tokens.js";
import { NO_OUTPUT_MESSAGE } from "../../../core/sessions/watchdog.js";
import { FIXTURE_AGENTS, fixtureAgent, makeHarness, until, type Harness } from "./harness.js";

let h: Harness;
afterEach(async () => h?.cleanup());

const stalledEvents = () => h.events.filter((e) => e.type === "session:stalled");

describe("turn watchdog (fake clock, real hung agents)", () => {
  it("marks a hung turn stalled with the no-output message, once, and never kills it", async () => {
    h = await makeHarness({ daemon: { turnStallAfterMs: 60_000 } });
    const { descriptor } = await h.runtime.start({ adapter: "hang", cwd: h.home, prompt: "anything" });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.state === "busy", "busy");
    const promptedAt = h.clock.now();
    h.clock.advance(60_000);
    h.runtime.tick();
    expect(stalledEvents()).toHaveLength(0);
    h.clock.advance(1);
    h.runtime.tick();
    h.runtime.tick();
    expect(stalledEvents()).toHaveLength(1);
    expect(stalledEvents()[0]!.data).toEqual({
      sessionId: descriptor.id,
      stalledSinceMs: promptedAt,
      lastTurnErrorMessage: NO_OUTPUT_MESSAGE,
    });
    const d = h.runtime.describe(s);
    expect(d).toMatchObject({ state: "busy", stalledSinceMs: promptedAt, lastTurnErrorMessage: NO_OUTPUT_MESSAGE });
    expect(() => process.kill(d.pid!, 0)).not.toThrow();
    await s.transcript.flushed();
    const { readTranscript } = await import("../../../core/sessions/transcript-reader.js");
    expect((await readTranscript(d.eventsPath)).some((l) => l.type === "session.stalled")).toBe(true);
  });

  it("a turn that produced output before going quiet is stalled without the no-output message; new output clears the stall", async () => {
    h = await makeHarness({
      daemon: { turnStallAfterMs: 1000 },
      acpAgents: {
        quiet: fixtureAgent("slow-agent.mjs", { env: { SLOW_AGENT_TICKS: "1", SLOW_AGENT_INTERVAL_MS: "600000" } }),
      },
    });
    const { descriptor } = await h.runtime.start({ adapter: "quiet", cwd: h.home, prompt: "x" });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.turnHadOutput, "first chunk");
    h.clock.advance(1001);
    h.runtime.tick();
    expect(stalledEvents()).toHaveLength(1);
    expect(h.runtime.describe(s).lastTurnErrorMessage).toBeUndefined();
    s.sink().update("agent_thought_chunk", { content: { type: "text", text: "…" } });
    expect(h.runtime.describe(s).stalledSinceMs).toBeUndefined();
  });

  it("0 or a negative threshold disables it; idle sessions are never stalled", async () => {
    h = await makeHarness({ daemon: { turnStallAfterMs: 0 } });
    const { descriptor } = await h.runtime.start({ adapter: "hang", cwd: h.home, prompt: "x" });
    await until(() => h.runtime.get(descriptor.id).state === "busy", "busy");
    await h.runtime.start({ adapter: "echo", cwd: h.home });
    const setThreshold = async (turnStallAfterMs: number) => {
      await writeFile(
        join(h.home, "config.json"),
        JSON.stringify({ acpAgents: FIXTURE_AGENTS, daemon: { turnStallAfterMs } }),
      );
      expect((await resolve(h.c, CONFIG).reload()).ok).toBe(true);
    };
    h.clock.advance(10 * 3_600_000);
    h.runtime.tick();
    await setThreshold(-5);
    h.runtime.tick();
    expect(stalledEvents()).toHaveLength(0);
    await setThreshold(10);
    h.runtime.tick();
    expect(stalledEvents().map((e) => (e.data as { sessionId: string }).sessionId)).toEqual([descriptor.id]);
  });
});

describe("session:handoff-suggested", () => {
  it("is emitted once per quota window at or below contextContinuity.handoffAtQuotaRemaining", async () => {
    h = await makeHarness({ defaults: { contextContinuity: { handoffAtQuotaRemaining: 5 } } });
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    const run = async (text: string) => {
      const r = h.runtime.prompt(descriptor.id, text, { sender: { kind: "human" }, urgency: "queue" });
      await h.runtime.waitFor(descriptor.id, r.promptId);
    };
    await run("quota:pro:9:w1");
    await run("quota:pro:5:w1");
    await run("quota:pro:2:w1");
    await run("quota:pro:4:w2");
    const suggested = h.events.filter((e) => e.type === "session:handoff-suggested").map((e) => e.data);
    expect(suggested).toEqual([
      { sessionId: descriptor.id, profile: "pro", remaining: 5, window: "w1", threshold: 5 },
      { sessionId: descriptor.id, profile: "pro", remaining: 4, window: "w2", threshold: 5 },
    ]);
  });

  it("is off when handoffAtQuotaRemaining is unset", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    const r = h.runtime.prompt(descriptor.id, "quota:pro:0:w1", { sender: { kind: "human" }, urgency: "queue" });
    await h.runtime.waitFor(descriptor.id, r.promptId);
    expect(h.events.some((e) => e.type === "session:handoff-suggested")).toBe(false);
  });
});

describe("sessions.attentionDelaySec", () => {
  it("keeps a finished session running for the delay, then settles it into quiet or attention", async () => {
    h = await makeHarness({ sessions: { attentionDelaySec: 10 } });
    const ok = (await h.runtime.start({ adapter: "echo", cwd: h.home, prompt: "hi" })).descriptor.id;
    const bad = (await h.runtime.start({ adapter: "crash", cwd: h.home, prompt: "hi" })).descriptor.id;
    await until(() => h.runtime.get(ok).turns === 1 && h.runtime.state(bad) === "ended", "turns");
    const activity = (id: string) => h.runtime.describe(h.runtime.get(id)).activity;
    expect([activity(ok), activity(bad)]).toEqual(["running", "running"]);
    h.clock.advance(9_999);
    expect(activity(ok)).toBe("running");
    h.clock.advance(1);
    expect([activity(ok), activity(bad)]).toEqual(["quiet", "attention"]);
  });
});
