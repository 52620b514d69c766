/**
 * The runtime judges turns by the model calls the llm-endpoint sidecar reports (noteModelCall),
 * with real fixture agents and a fake clock; a fake ModelAccess stands in for the sidecar.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { ModelAccess } from "../../../core/sessions/model-access.js";
import type { ModelCallNote } from "../../../core/sessions/session-tracing.js";
import { readTranscript } from "../../../core/sessions/transcript-reader.js";
import { fixtureAgent, makeHarness, until, type Harness } from "./harness.js";

let h: Harness;
afterEach(async () => h?.cleanup());

const call = (status: number, error?: string): ModelCallNote => ({
  model: "claude-sonnet-4-5",
  inputTokens: status < 400 ? 10 : 0,
  outputTokens: status < 400 ? 3 : 0,
  status,
  at: new Date(h.clock.now()).toISOString(),
  ...(error ? { error } : {}),
});

/** A stand-in sidecar: `noted` is held until the test releases it (the reports that trail a turn's end). */
function fakeAccess() {
  const held: Array<{ sessionId: string; release: () => void }> = [];
  const access: ModelAccess = {
    open: async () => ({ env: {} }),
    close: () => undefined,
    noted: (sessionId) => new Promise<void>((release) => held.push({ sessionId, release })),
  };
  return { access, held };
}

const turnEnded = () => h.events.filter((e) => e.type === "session:turn-ended").map((e) => e.data);
const stalled = () => h.events.filter((e) => e.type === "session:stalled").map((e) => e.data);

describe("a turn whose every model call failed", () => {
  it("ends as an error though the agent said end_turn: result, descriptor, event and transcript carry it", async () => {
    h = await makeHarness({ sessions: { attentionDelaySec: 0 } });
    const fake = fakeAccess();
    h.runtime.useModelAccess(fake.access);
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    const r = h.runtime.prompt(descriptor.id, "hi", { sender: { kind: "human" }, urgency: "queue" });
    await until(() => fake.held.length === 1, "the turn's end to wait for the sidecar's reports");
    // The reports trail the agent's answer: the turn still counts them.
    h.runtime.noteModelCall(descriptor.id, call(503));
    h.runtime.noteModelCall(descriptor.id, call(502, "upstream unreachable (ECONNREFUSED)"));
    fake.held[0]!.release();
    const result = await h.runtime.waitFor(descriptor.id, r.promptId);
    const error = "every model call of this turn failed (2 calls): status 502: upstream unreachable (ECONNREFUSED)";
    expect(result).toMatchObject({ stopReason: "end_turn", text: "echo: hi", error });
    const d = h.runtime.describe(h.runtime.get(descriptor.id));
    expect(d).toMatchObject({ lastStopReason: "end_turn", lastTurnErrorMessage: error, activity: "attention" });
    expect(d.modelUsage).toMatchObject({ calls: 2, failed: 2 });
    expect(turnEnded()).toEqual([{ sessionId: descriptor.id, promptId: r.promptId, stopReason: "end_turn", error }]);
    await h.runtime.get(descriptor.id).transcript.flushed();
    const end = (await readTranscript(d.eventsPath)).find((l) => l.type === "turn.failed");
    expect(end?.data).toMatchObject({ promptId: r.promptId, stopReason: "end_turn", error });
  });

  it("one successful call, or none at all, leaves the turn as the agent ended it", async () => {
    h = await makeHarness({ sessions: { attentionDelaySec: 0 } });
    const fake = fakeAccess();
    h.runtime.useModelAccess(fake.access);
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    const turn = async (calls: ModelCallNote[]) => {
      const r = h.runtime.prompt(descriptor.id, "hi", { sender: { kind: "human" }, urgency: "queue" });
      await until(() => fake.held.length > 0, "the turn's end");
      for (const c of calls) h.runtime.noteModelCall(descriptor.id, c);
      fake.held.shift()!.release();
      return h.runtime.waitFor(descriptor.id, r.promptId);
    };
    expect((await turn([call(500), call(200), call(500)])).error).toBeUndefined();
    expect((await turn([])).error).toBeUndefined();
    const d = h.runtime.describe(h.runtime.get(descriptor.id));
    expect(d.activity).toBe("quiet");
    expect(d.lastTurnErrorMessage).toBeUndefined();
  });

  it("a session without the sidecar waits for nothing and is judged by nothing", async () => {
    h = await makeHarness();
    const { descriptor, result } = await h.runtime.start({ adapter: "echo", cwd: h.home, prompt: "hi" });
    const out = await h.runtime.waitFor(descriptor.id, result!.promptId);
    expect(out).toEqual({ promptId: result!.promptId, stopReason: "end_turn", text: "echo: hi" });
  });
});

describe("a turn retrying a dead upstream (fake clock)", () => {
  it("is stalled once its calls have failed for the threshold, though its agent keeps talking; a success clears it", async () => {
    h = await makeHarness({
      daemon: { turnStallAfterMs: 60_000 },
      acpAgents: {
        chatty: fixtureAgent("slow-agent.mjs", { env: { SLOW_AGENT_TICKS: "100000", SLOW_AGENT_INTERVAL_MS: "20" } }),
      },
    });
    const { descriptor } = await h.runtime.start({ adapter: "chatty", cwd: h.home, prompt: "work" });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.state === "busy" && s.turnHadOutput, "the turn to run");
    const first = h.clock.now();
    // A call fails every 10 s while the agent keeps sending updates (the quiet rule never fires).
    const failThenWait = async (ms: number) => {
      h.runtime.noteModelCall(descriptor.id, call(502, "upstream unreachable (ECONNREFUSED)"));
      h.clock.advance(ms);
      const t = h.clock.now();
      await until(() => s.lastActivityAt === t, "the agent's next update");
      h.runtime.tick();
    };
    for (let i = 0; i < 5; i++) await failThenWait(10_000);
    await failThenWait(9_999);
    expect(stalled()).toHaveLength(0);
    h.clock.advance(1);
    h.runtime.tick();
    const reason = "model calls failing for 60s: status 502: upstream unreachable (ECONNREFUSED)";
    expect(stalled()).toEqual([{ sessionId: descriptor.id, stalledSinceMs: first, lastTurnErrorMessage: reason }]);
    // The agent's updates ("Reconnecting…") do not clear it, nor flag it again.
    const seen = s.lastActivityAt;
    h.clock.advance(1);
    await until(() => s.lastActivityAt > seen, "more updates from the agent");
    h.runtime.tick();
    expect(h.runtime.describe(s)).toMatchObject({ state: "busy", stalledSinceMs: first, lastTurnErrorMessage: reason });
    expect(stalled()).toHaveLength(1);
    await s.transcript.flushed();
    const line = (await readTranscript(descriptor.eventsPath)).find((l) => l.type === "session.stalled");
    expect(line?.data).toEqual({ stalledSinceMs: first, lastTurnErrorMessage: reason });

    h.runtime.noteModelCall(descriptor.id, call(200));
    const d = h.runtime.describe(s);
    expect(d.stalledSinceMs).toBeUndefined();
    expect(d.lastTurnErrorMessage).toBeUndefined();
    // Failing again starts a new count from its first failure.
    for (let i = 0; i < 5; i++) await failThenWait(10_000);
    expect(stalled()).toHaveLength(1);
  });

  it("a 0 threshold disables it", async () => {
    h = await makeHarness({ daemon: { turnStallAfterMs: 0 } });
    const { descriptor } = await h.runtime.start({ adapter: "slow", cwd: h.home, prompt: "work" });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.state === "busy", "busy");
    h.runtime.noteModelCall(descriptor.id, call(500));
    h.clock.advance(3_600_000);
    h.runtime.noteModelCall(descriptor.id, call(500));
    h.runtime.tick();
    expect(stalled()).toHaveLength(0);
  });
});
