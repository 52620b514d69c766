import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { readTranscript } from "../../../core/sessions/transcript-reader.js";
import { LOGGER, resolve } from "../../../core/tokens.js";
import { makeRepo, sh, tempDir } from "../workspaces/support.js";
import { FIXTURE_AGENTS, fixtureAgent, makeHarness, until, type Harness } from "./harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const AGENTS = {
  ...FIXTURE_AGENTS,
  ctx: fixtureAgent("context-agent.mjs"),
  plain: fixtureAgent("context-agent.mjs", { env: { CONTEXT_AGENT_COMPACT: "0" } }),
};
const human = { sender: { kind: "human" as const }, urgency: "queue" as const };

async function harness(contextContinuity: Record<string, unknown>): Promise<Harness> {
  h = await makeHarness({ acpAgents: AGENTS, defaults: { contextContinuity } });
  return h;
}

async function turn(id: string, text: string) {
  const r = h!.runtime.prompt(id, text, human);
  return h!.runtime.waitFor(id, r.promptId);
}

async function lines(id: string) {
  const s = h!.runtime.get(id);
  await s.transcript.flushed();
  return readTranscript(s.fixed.eventsPath);
}

/**
 * Starts a `hold` turn and resolves once the agent runs it (its first chunk arrived), so that a
 * cancel cannot overtake the prompt. The agent's command list is awaited first: it too counts as
 * output, and must not be taken for the turn's.
 */
async function holding(id: string) {
  const s = h!.runtime.get(id);
  await until(() => s.handle?.compactCommand?.() === "/compact", "the agent's available_commands_update");
  const hold = h!.runtime.prompt(id, "hold", human);
  await until(() => s.current?.promptId === hold.promptId && s.turnHadOutput, "the held turn");
  return hold;
}

const events = (type: string) => h!.events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
const sonnet = (inputTokens: number) => ({
  model: "claude-sonnet-4-5-20250929",
  inputTokens,
  source: "llm-endpoint" as const,
});

describe("contextContinuity acts on context-use reports", () => {
  it("warn: once per upward crossing of a sidecar-reported use, re-armed below; the descriptor shows the use", async () => {
    await harness({ warnAtPct: 50 });
    const { descriptor } = await h!.runtime.start({ adapter: "echo", cwd: h!.home });
    for (const tokens of [90_000, 120_000, 130_000, 20_000, 110_000])
      h!.runtime.reportContextUse(descriptor.id, sonnet(tokens));
    expect(events("session:context-warn")).toEqual([
      expect.objectContaining({
        sessionId: descriptor.id,
        threshold: "warnAtPct",
        atPct: 50,
        pct: 60,
        inputTokens: 120_000,
        window: 200_000,
        source: "llm-endpoint",
      }),
      expect.objectContaining({ pct: 55, inputTokens: 110_000 }),
    ]);
    expect(h!.runtime.describe(h!.runtime.get(descriptor.id)).context).toEqual({
      model: "claude-sonnet-4-5-20250929",
      inputTokens: 110_000,
      window: 200_000,
      pct: 55,
      source: "llm-endpoint",
    });
    expect((await lines(descriptor.id)).filter((l) => l.type === "context.warn")).toHaveLength(2);
  });

  it("the agent's own usage_update counts, against the window it reports; mode warn names what act would have done", async () => {
    await harness({ mode: "warn", compactAtPct: 70 });
    const { descriptor } = await h!.runtime.start({ adapter: "ctx", cwd: h!.home });
    await turn(descriptor.id, "usage:300000:400000");
    expect(events("session:context-warn")).toEqual([
      expect.objectContaining({
        threshold: "compactAtPct",
        wouldHave: "compact",
        pct: 75,
        window: 400_000,
        source: "agent",
      }),
    ]);
    expect(events("session:context-compact")).toEqual([]);
    expect(h!.runtime.get(descriptor.id).turns).toBe(1);
  });

  it("compact: runs the agent's advertised /compact as a system turn after the crossing turn, once per crossing", async () => {
    await harness({ compactAtPct: 80 });
    const { descriptor } = await h!.runtime.start({ adapter: "ctx", cwd: h!.home });
    const s = h!.runtime.get(descriptor.id);
    await until(() => s.handle?.compactCommand?.() === "/compact", "the agent's available_commands_update");
    await turn(descriptor.id, "usage:170000:200000");
    await until(() => s.turns === 2 && s.state === "idle", "the compact turn");
    expect(events("session:context-compact")).toEqual([
      expect.objectContaining({ compacted: true, command: "/compact", threshold: "compactAtPct", pct: 85 }),
    ]);
    const prompts = (await lines(descriptor.id)).filter((l) => l.type === "prompt").map((l) => l.data);
    expect(prompts[1]).toMatchObject({ text: "/compact", sender: { kind: "system" } });
    expect(s.context?.pct).toBe(0.5); // the agent reported its compacted use: the threshold is armed again
    await turn(descriptor.id, "usage:180000:200000");
    await until(() => s.turns === 4 && s.state === "idle", "the second compact turn");
    expect(events("session:context-compact")).toHaveLength(2);
  });

  it("compact: an agent that advertised no compact command is not compacted, and the event says so", async () => {
    await harness({ compactAtPct: 80 });
    const { descriptor } = await h!.runtime.start({ adapter: "plain", cwd: h!.home });
    await turn(descriptor.id, "usage:170000:200000");
    expect(events("session:context-compact")).toEqual([
      expect.objectContaining({ compacted: false, reason: expect.stringMatching(/adapter plain cannot compact/) }),
    ]);
    expect(h!.runtime.get(descriptor.id).turns).toBe(1);
  });

  it("continue fresh: after the crossing turn, a linked session in the same worktree takes the tree over with a handoff summary; the old one stops", async () => {
    await harness({ continueFreshAtPct: 80 });
    const repo = await makeRepo(await tempDir());
    const { descriptor: old } = await h!.runtime.start({
      adapter: "ctx",
      cwd: repo,
      worktree: "ctx-wt",
      label: "parser",
    });
    await turn(old.id, "build the parser");
    await turn(old.id, "usage:170000:200000");
    await until(() => h!.runtime.state(old.id) === "ended", "the old session's stop");
    const [done] = events("session:context-continued");
    expect(done).toMatchObject({
      sessionId: old.id,
      threshold: "continueFreshAtPct",
      pct: 85,
      continuedAs: expect.stringMatching(/^ses_/),
    });
    const next = h!.runtime.describe(h!.runtime.get(done!.continuedAs as string));
    expect(h!.runtime.describe(h!.runtime.get(old.id))).toMatchObject({
      continuedAs: next.id,
      exit: { error: "stopped" },
    });
    expect(next).toMatchObject({
      continuedFrom: old.id,
      adapter: "ctx",
      cwd: old.cwd,
      worktree: old.worktree,
      label: "parser",
    });
    await until(() => h!.runtime.get(next.id).turns === 1, "the handoff turn");
    const handoff = (await lines(next.id)).find((l) => l.type === "prompt")!.data as {
      text: string;
      sender: { kind: string };
    };
    expect(handoff.sender.kind).toBe("system");
    expect(handoff.text).toMatch(
      /^\[svc handoff\] You continue session ses_\w+, which reached 85% .*continueFreshAtPct is 80/,
    );
    expect(handoff.text).toContain("## First prompt\nbuild the parser");
    expect(handoff.text).toContain("## The agent's latest reply\nused 170000");
    // The tree stays, and is the new session's: a third spawn of the slug is refused naming it.
    expect(existsSync(old.worktree!.path)).toBe(true);
    expect(sh(repo, "worktree", "list", "--porcelain")).toContain(`worktree ${old.worktree!.path}\n`);
    await expect(h!.runtime.start({ adapter: "echo", cwd: repo, worktree: "ctx-wt" })).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining(`in use by live session ${next.id}`),
    });
  });

  it("continue fresh: waits for the in-flight turn, and prompts queued meanwhile move to the new session", async () => {
    await harness({ continueFreshAtPct: 80 });
    const { descriptor: old } = await h!.runtime.start({ adapter: "ctx", cwd: h!.home });
    const hold = await holding(old.id);
    h!.runtime.reportContextUse(old.id, sonnet(170_000));
    expect(events("session:context-continued")).toEqual([]);
    const queued = h!.runtime.prompt(old.id, "next step", { sender: { kind: "human" }, urgency: "interrupt" });
    expect(await h!.runtime.waitFor(old.id, hold.promptId)).toMatchObject({ stopReason: "cancelled" });
    const moved = await h!.runtime.waitFor(old.id, queued.promptId);
    const [done] = events("session:context-continued");
    expect(moved.error).toMatch(new RegExp(`^moved to session ${done!.continuedAs} as prm_`));
    const nextId = done!.continuedAs as string;
    await until(() => h!.runtime.get(nextId).turns === 2, "the handoff and the moved prompt");
    expect([...h!.runtime.get(nextId).results.values()].map((r) => r.text)).toEqual([
      expect.stringMatching(/^echo: \[svc handoff\]/),
      "echo: next step",
    ]);
  });

  it("continue fresh: when the new session cannot start, the event says why and the old session goes on", async () => {
    await harness({ continueFreshAtPct: 80 });
    const cwd = await tempDir("svc-ctx-gone-");
    const { descriptor: old } = await h!.runtime.start({ adapter: "ctx", cwd });
    await rm(cwd, { recursive: true });
    await turn(old.id, "usage:170000:200000");
    await until(() => events("session:context-continued").length === 1, "the continuation's outcome");
    expect(events("session:context-continued")[0]).toMatchObject({
      sessionId: old.id,
      error: expect.stringContaining("is not a directory"),
    });
    expect((await turn(old.id, "still here")).text).toBe("echo: still here");
    expect(h!.runtime.describe(h!.runtime.get(old.id)).continuedAs).toBeUndefined();
  });

  it("hard stop: cancels the in-flight turn, refuses queued and further prompts naming the threshold; the most severe crossing acts", async () => {
    await harness({ warnAtPct: 50, compactAtPct: 70, hardStopAtPct: 90 });
    const { descriptor } = await h!.runtime.start({ adapter: "ctx", cwd: h!.home });
    const s = h!.runtime.get(descriptor.id);
    const hold = await holding(descriptor.id);
    const waiting = h!.runtime.prompt(descriptor.id, "after", human);
    h!.runtime.reportContextUse(descriptor.id, sonnet(190_000));
    expect(await h!.runtime.waitFor(descriptor.id, hold.promptId)).toMatchObject({ stopReason: "cancelled" });
    expect(await h!.runtime.waitFor(descriptor.id, waiting.promptId)).toMatchObject({
      stopReason: "error",
      error: expect.stringContaining("hardStopAtPct"),
    });
    expect(events("session:context-hard-stop")).toEqual([
      expect.objectContaining({
        pct: 95,
        threshold: "hardStopAtPct",
        alsoCrossed: ["warnAtPct", "compactAtPct"],
        cancelled: hold.promptId,
        refused: [waiting.promptId],
      }),
    ]);
    expect(events("session:context-warn")).toEqual([]);
    expect(events("session:context-compact")).toEqual([]);
    expect(() => h!.runtime.prompt(descriptor.id, "more", human)).toThrow(
      /context use reached 95% of claude-sonnet-4-5-20250929's window \(190000 of 200000 tokens\), at or above defaults.contextContinuity.hardStopAtPct \(90\).*start a fresh session/,
    );
    const view = h!.runtime.describe(s);
    expect(view).toMatchObject({ state: "idle", refusal: expect.stringContaining("takes no further prompts") });
    expect((await lines(descriptor.id)).map((l) => l.type)).toContain("context.hard-stop");
    // A sentinel's event for the stopped session is parked, not refused and lost.
    const receipt = await h!.runtime.deliver(descriptor.id, "an event", {
      sender: { kind: "sentinel", id: "snt_x" },
      urgency: "queue",
      ref: { sentinelId: "snt_x", eventId: "evt_1" },
    });
    expect(receipt.delivery).toBe("parked");
    expect(await h!.runtime.parked(descriptor.id, "snt_x")).toEqual([
      expect.objectContaining({ eventId: "evt_1", text: "an event", reason: expect.stringContaining("hardStopAtPct") }),
    ]);
  });

  it("an unknown model turns the policy off for its reports, said once; mode off acts on nothing", async () => {
    await harness({ warnAtPct: 1, hardStopAtPct: 2 });
    const { descriptor } = await h!.runtime.start({ adapter: "echo", cwd: h!.home });
    h!.runtime.reportContextUse(descriptor.id, { model: "llama-3-70b", inputTokens: 150_000, source: "llm-endpoint" });
    h!.runtime.reportContextUse(descriptor.id, { model: "ext-latest", inputTokens: 150_000, source: "llm-endpoint" });
    expect((await lines(descriptor.id)).filter((l) => l.type === "context.policy-off").map((l) => l.data)).toEqual([
      expect.objectContaining({
        model: "llama-3-70b",
        reason: expect.stringContaining('no context window for model "llama-3-70b"'),
      }),
    ]);
    expect(
      (resolve(h!.c, LOGGER) as unknown as { lines: string[] }).lines.filter((l) => l.includes("context policy off")),
    ).toHaveLength(1);
    expect(h!.events.filter((e) => e.type.startsWith("session:context-"))).toEqual([]);
    expect(h!.runtime.describe(h!.runtime.get(descriptor.id)).context).toBeUndefined();
    expect(() =>
      h!.runtime.reportContextUse(descriptor.id, { model: "gpt-5", inputTokens: -1, source: "llm-endpoint" }),
    ).toThrow(/inputTokens must be a number >= 0/);
  });

  it("mode off: the use is shown, nothing acts", async () => {
    await harness({ mode: "off", warnAtPct: 1, hardStopAtPct: 2 });
    const { descriptor } = await h!.runtime.start({ adapter: "echo", cwd: h!.home });
    h!.runtime.reportContextUse(descriptor.id, { model: "gpt-5", inputTokens: 200_000, source: "llm-endpoint" });
    expect(h!.events.filter((e) => e.type.startsWith("session:context-"))).toEqual([]);
    expect(h!.runtime.describe(h!.runtime.get(descriptor.id)).context).toMatchObject({ pct: 50, window: 400_000 });
    expect((await turn(descriptor.id, "hi")).text).toBe("echo: hi");
  });
});
