import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SessionMessaging } from "../../../core/sessions/messaging.js";
import { CONFIG, resolve } from "../../../core/tokens.js";
import { FIXTURE_AGENTS, makeHarness, until, type Harness } from "./harness.js";

let h: Harness;
let m: SessionMessaging;
afterEach(async () => h?.cleanup());

async function family(config: Record<string, unknown> = {}) {
  h = await makeHarness(config);
  m = new SessionMessaging(h.runtime, resolve(h.c, CONFIG));
  const parent = (await h.runtime.start({ adapter: "echo", cwd: h.home })).descriptor.id;
  const a = (await h.runtime.start({ adapter: "echo", cwd: h.home, parentId: parent })).descriptor.id;
  const b = (await h.runtime.start({ adapter: "hang", cwd: h.home, parentId: parent })).descriptor.id;
  const stranger = (await h.runtime.start({ adapter: "echo", cwd: h.home, parentId: a })).descriptor.id;
  return { parent, a, b, stranger };
}

describe("messaging policy", () => {
  it("message_send reaches a child and the parent; a sibling only with allowSiblings; an unrelated session never", async () => {
    const f = await family();
    expect(h.runtime.describe(h.runtime.get(f.parent))).toMatchObject({ depth: 0, role: "supervisor" });
    expect(h.runtime.describe(h.runtime.get(f.a))).toMatchObject({ depth: 1, role: "executor", parentId: f.parent });
    expect(m.messageSend(f.parent, f.a, "to child")).toMatchObject({ to: f.a, from: f.parent });
    expect(m.messageSend(f.a, f.parent, "to parent").to).toBe(f.parent);
    expect(() => m.messageSend(f.a, f.b, "to sibling")).toThrow(/allowSiblings/);
    expect(() => m.messageSend(f.b, f.stranger, "hi")).toThrow(/neither the parent, a child nor a sibling/);
    await writeFile(
      join(h.home, "config.json"),
      JSON.stringify({ acpAgents: FIXTURE_AGENTS, defaults: { messaging: { allowSiblings: true } } }),
    );
    expect((await resolve(h.c, CONFIG).reload()).ok).toBe(true);
    expect(m.messageSend(f.a, f.b, "to sibling").to).toBe(f.b);
  });

  it("message_reply answers the original sender; message_parent goes up the lineage", async () => {
    const f = await family();
    const sent = m.messageSend(f.parent, f.a, "question");
    const reply = m.messageReply(f.a, sent.messageId, "answer");
    expect(reply).toMatchObject({ from: f.a, to: f.parent });
    expect(() => m.messageReply(f.b, sent.messageId, "not mine")).toThrow(/was not sent to/);
    expect(m.messageParent(f.a, "done").to).toBe(f.parent);
    expect(() => m.messageParent(f.parent, "up?")).toThrow(/has no parent/);
    await until(() => h.runtime.get(f.parent).turns >= 2, "parent turns");
    const texts = [...h.runtime.get(f.parent).results.values()].map((r) => r.text);
    expect(texts).toEqual(expect.arrayContaining(["echo: answer", "echo: done"]));
  });

  it("a session's interrupt is delivered as steer unless agentInterrupt allows it; a human keeps interrupt", async () => {
    const f = await family();
    const first = h.runtime.prompt(f.b, "hang", { sender: { kind: "human" }, urgency: "queue" });
    await until(() => h.runtime.get(f.b).state === "busy", "busy");
    const fromAgent = m.messageSend(f.parent, f.b, "stop that", "interrupt");
    expect(fromAgent).toMatchObject({ delivery: "steered", requested: "interrupt" });
    const fromHuman = m.prompt(f.b, "really stop", { interrupt: true });
    expect(fromHuman.delivery).toBe("interrupted");
    expect((await h.runtime.waitFor(f.b, first.promptId)).stopReason).toBe("cancelled");
  });

  it("agent_prompt without interrupt follows defaults.agentPromptInterrupt", async () => {
    const f = await family({ defaults: { agentPromptInterrupt: true } });
    h.runtime.prompt(f.b, "hang", { sender: { kind: "human" }, urgency: "queue" });
    await until(() => h.runtime.get(f.b).state === "busy", "busy");
    expect(m.prompt(f.b, "default interrupt", {}).delivery).toBe("interrupted");
    await until(
      () => h.runtime.get(f.b).state === "busy" && h.runtime.get(f.b).current?.text === "default interrupt",
      "second turn",
    );
    expect(m.prompt(f.b, "explicitly queued", { interrupt: false }).delivery).toBe("queued");
  });

  it("flags prompts queued longer than pendingPromptStaleMinutes and tells the sending session by a notice", async () => {
    const f = await family({ defaults: { messaging: { pendingPromptStaleMinutes: 5 } } });
    h.runtime.prompt(f.b, "hang", { sender: { kind: "human" }, urgency: "queue" });
    await until(() => h.runtime.get(f.b).state === "busy", "busy");
    const sent = m.messageSend(f.parent, f.b, "are you there?");
    h.clock.advance(4 * 60_000);
    h.runtime.tick();
    expect(h.runtime.describe(h.runtime.get(f.b)).pendingPrompts[0]).toMatchObject({
      promptId: sent.promptId,
      stale: false,
    });
    h.clock.advance(60_000);
    h.runtime.tick();
    h.runtime.tick();
    expect(h.runtime.describe(h.runtime.get(f.b)).pendingPrompts[0]).toMatchObject({
      promptId: sent.promptId,
      stale: true,
      sender: { kind: "session", id: f.parent },
    });
    expect(h.events.filter((e) => e.type === "session:prompt-stale")).toHaveLength(1);
    await until(() => h.runtime.get(f.parent).turns === 1, "notice turn");
    expect([...h.runtime.get(f.parent).results.values()][0]!.text).toContain(
      `[svc notice] your message ${sent.promptId} to session ${f.b} is still queued`,
    );
  });
});
