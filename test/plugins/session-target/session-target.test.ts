import { afterEach, describe, expect, it } from "vitest";
import type { SentinelView, SvcEvent, TargetInstance } from "../../../core/plugin-api/index.js";
import { makePluginContext } from "../../../core/plugin-host/context.js";
import { SERVICES, resolve } from "../../../core/tokens.js";
import sessionTarget from "../../../plugins/session-target/index.js";
import { REPO_ROOT } from "../../support/paths.js";
import { makeHarness, until, type Harness } from "../../core/sessions/harness.js";

let h: Harness;
afterEach(async () => h?.cleanup());

async function setup(config: Record<string, unknown> = {}): Promise<TargetInstance> {
  h = await makeHarness(config);
  resolve(h.c, SERVICES).provide("sessions", h.runtime);
  const ctx = makePluginContext(h.c, {
    type: "target",
    kind: "session",
    definition: sessionTarget,
    source: { package: "svc", builtin: true, resolvedFrom: "builtin", dir: REPO_ROOT },
  });
  return sessionTarget.setup(ctx);
}

function sentinel(sessionId: string, urgency?: string, id = "snt_1"): SentinelView {
  return {
    id,
    status: "active",
    createdAt: 0,
    spec: {
      match: [{ subject: "github:acme/api#*" }],
      until: { kind: "never" },
      target: { kind: "session", sessionId, ...(urgency ? { urgency } : {}) },
      label: "pr watch",
    },
  };
}

const event = (n: number): SvcEvent => ({
  id: `evt-${n}`,
  type: "github.pull_request.review_submitted",
  subjects: ["github:acme/api", "github:acme/api#42"],
  data: { n },
});

describe("session target", () => {
  it("validates and stores {kind, sessionId, urgency}; rejects malformed input", async () => {
    const t = await setup();
    expect(
      await t.create(
        { kind: "session", sessionId: "ses_ABC", urgency: "steer" },
        { sentinelId: "s", principal: "loopback" },
      ),
    ).toEqual({ kind: "session", sessionId: "ses_ABC", urgency: "steer" });
    expect(t.inputSchema.safeParse({ kind: "session", sessionId: "../etc" }).success).toBe(false);
    expect(t.inputSchema.safeParse({ kind: "session", sessionId: "s", urgency: "now" }).success).toBe(false);
  });

  it("delivers a matched event into a live ACP session as a prompt", async () => {
    const t = await setup();
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    expect(await t.deliver({ sentinel: sentinel(descriptor.id), event: event(1) })).toEqual({ ack: "now" });
    const s = h.runtime.get(descriptor.id);
    await until(() => s.turns === 1, "the event's turn");
    const result = [...s.results.values()][0]!;
    expect(result.text).toContain(
      'echo: [svc sentinel snt_1 "pr watch"] github.pull_request.review_submitted on github:acme/api#42 (event evt-1)',
    );
    expect(result.text).toContain('"n": 1');
  });

  it("queues behind an in-flight turn by default", async () => {
    const t = await setup();
    const { descriptor } = await h.runtime.start({ adapter: "slow", cwd: h.home, prompt: "busy" });
    await until(() => h.runtime.get(descriptor.id).turnHadOutput, "turn output");
    await t.deliver({ sentinel: sentinel(descriptor.id), event: event(2) });
    const st = await t.status!(sentinel(descriptor.id));
    expect(st.lastDelivery).toMatchObject({ eventId: "evt-2", receipt: { delivery: "queued" } });
    expect(h.runtime.describe(h.runtime.get(descriptor.id)).pendingPrompts).toEqual([
      expect.objectContaining({ sender: { kind: "sentinel", id: "snt_1" }, urgency: "queue" }),
    ]);
  });

  it("a sentinel interrupt is denied by default and delivered as steer, and the result says so", async () => {
    const t = await setup();
    const { descriptor } = await h.runtime.start({ adapter: "slow", cwd: h.home, prompt: "busy" });
    await until(() => h.runtime.get(descriptor.id).turnHadOutput, "turn output");
    await t.deliver({ sentinel: sentinel(descriptor.id, "interrupt"), event: event(3) });
    const st = await t.status!(sentinel(descriptor.id, "interrupt"));
    expect(st.lastDelivery).toMatchObject({
      receipt: { delivery: "steered", requested: "interrupt", note: expect.stringContaining("agentInterrupt") },
    });
    expect(h.runtime.get(descriptor.id).state).toBe("busy");
  });

  it("with agentInterrupt allow (or agentPromptInterrupt as the default urgency) the event cuts the turn", async () => {
    const t = await setup({ defaults: { agentPromptInterrupt: true, messaging: { agentInterrupt: "allow" } } });
    const { descriptor, result: first } = await h.runtime.start({ adapter: "slow", cwd: h.home, prompt: "busy" });
    await until(() => h.runtime.get(descriptor.id).turnHadOutput, "turn output");
    await t.deliver({ sentinel: sentinel(descriptor.id), event: event(4) });
    expect((await t.status!(sentinel(descriptor.id))).lastDelivery).toMatchObject({
      receipt: { delivery: "interrupted" },
    });
    expect((await h.runtime.waitFor(descriptor.id, first!.promptId)).stopReason).toBe("cancelled");
  });

  it("parks events for an ended session (persisted, shown by status) instead of dropping them", async () => {
    const t = await setup();
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
    await h.runtime.stop(descriptor.id);
    expect(await t.deliver({ sentinel: sentinel(descriptor.id), event: event(5) })).toEqual({ ack: "now" });
    await t.deliver({ sentinel: sentinel("ses_from_an_earlier_daemon"), event: event(6) });
    const st = await t.status!(sentinel(descriptor.id));
    expect(st).toMatchObject({ session: "ended", parked: 1, parkedEvents: [{ eventId: "evt-5" }] });
    expect((await h.runtime.parked(descriptor.id))[0]!.text).toContain("evt-5");
    expect((await t.status!(sentinel("ses_from_an_earlier_daemon"))).parked).toBe(1);
  });

  it("parks a delivered event still queued when the session dies", async () => {
    const t = await setup();
    const { descriptor } = await h.runtime.start({ adapter: "slow", cwd: h.home, prompt: "busy" });
    await until(() => h.runtime.get(descriptor.id).turnHadOutput, "turn output");
    await t.deliver({ sentinel: sentinel(descriptor.id), event: event(7) });
    await h.runtime.stop(descriptor.id);
    await until(async () => (await h.runtime.parked(descriptor.id)).length === 1, "parked");
    expect((await h.runtime.parked(descriptor.id))[0]).toMatchObject({
      eventId: "evt-7",
      reason: expect.stringContaining("ended before"),
    });
  });
});
