import { afterEach, describe, expect, it } from "vitest";
import { SessionMessaging } from "../../../core/sessions/messaging.js";
import { CONFIG, resolve } from "../../../core/tokens.js";
import { fixtureAgent, until } from "../sessions/harness.js";
import { AGENTS, makeRepo, makeWsHarness, sh, tempDir, type WsHarness } from "./support.js";
import { processAlive } from "../../support/process-alive.js";

let h: WsHarness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** The token the daemon put in a session's environment (as a client inside it would present it). */
function tokenOf(w: WsHarness, id: string): string {
  // The runtime keeps only digests of the token it put in the session's environment; the test
  // issues another one for the same session (test/e2e/workspaces.test.ts uses the real one).
  return w.runtime.workspaces.tokens.issue(id, "ab".repeat(24));
}

describe("spawn lineage", () => {
  it("attach always: a spawn presenting a session's token is nested under it; message_parent reaches the parent", async () => {
    h = await makeWsHarness();
    const cwd = await tempDir();
    const parent = await h.runtime.start({ adapter: "echo", cwd });
    expect(parent.descriptor.parentId).toBeUndefined();
    const child = await h.runtime.start({ adapter: "echo", cwd, callerToken: tokenOf(h, parent.descriptor.id) });
    expect(child.descriptor).toMatchObject({ parentId: parent.descriptor.id, depth: 1, role: "executor" });
    const messaging = new SessionMessaging(h.runtime, resolve(h.c, CONFIG));
    const receipt = messaging.messageParent(child.descriptor.id, "done");
    expect(receipt.to).toBe(parent.descriptor.id);
    await until(() => h!.runtime.get(parent.descriptor.id).turns === 1, "the parent ran the message");
  });

  it("per-call attach: false opts out; an unknown token names nobody", async () => {
    h = await makeWsHarness();
    const cwd = await tempDir();
    const parent = await h.runtime.start({ adapter: "echo", cwd });
    const token = tokenOf(h, parent.descriptor.id);
    expect(
      (await h.runtime.start({ adapter: "echo", cwd, callerToken: token, attach: false })).descriptor.parentId,
    ).toBeUndefined();
    expect(
      (await h.runtime.start({ adapter: "echo", cwd, callerToken: "svcst_forged" })).descriptor.parentId,
    ).toBeUndefined();
  });

  it("on-request: nested only when the caller asks (attach: true)", async () => {
    h = await makeWsHarness({}, { SVC_SPAWN_ATTACH: "on-request" });
    const cwd = await tempDir();
    const parent = await h.runtime.start({ adapter: "echo", cwd });
    const token = tokenOf(h, parent.descriptor.id);
    expect((await h.runtime.start({ adapter: "echo", cwd, callerToken: token })).descriptor.parentId).toBeUndefined();
    expect(
      (await h.runtime.start({ adapter: "echo", cwd, callerToken: token, attach: true })).descriptor.parentId,
    ).toBe(parent.descriptor.id);
  });

  it("a token is forgotten when its session ends", async () => {
    h = await makeWsHarness();
    const cwd = await tempDir();
    const parent = await h.runtime.start({ adapter: "echo", cwd });
    const token = tokenOf(h, parent.descriptor.id);
    await h.runtime.stop(parent.descriptor.id);
    await until(() => h!.runtime.workspaces.tokens.sessionOf(token) === undefined, "token revoked");
    expect((await h.runtime.start({ adapter: "echo", cwd, callerToken: token })).descriptor.parentId).toBeUndefined();
  });

  it("defaultRoleDepthCutoff sets the role by lineage depth; maxGrantableDelegation caps what a parent grants", async () => {
    h = await makeWsHarness({ defaults: { defaultRoleDepthCutoff: 2, maxGrantableDelegation: 1 } });
    const cwd = await tempDir();
    const root = await h.runtime.start({ adapter: "echo", cwd });
    expect(root.descriptor).toMatchObject({ depth: 0, role: "supervisor" });
    expect(root.descriptor.delegation).toBeUndefined();
    const child = await h.runtime.start({ adapter: "echo", cwd, parentId: root.descriptor.id, delegation: 5 });
    expect(child.descriptor).toMatchObject({ depth: 1, role: "supervisor", delegation: 1 });
    const grandchild = await h.runtime.start({ adapter: "echo", cwd, parentId: child.descriptor.id });
    expect(grandchild.descriptor).toMatchObject({ depth: 2, role: "executor", delegation: 0 });
    await expect(h.runtime.start({ adapter: "echo", cwd, parentId: grandchild.descriptor.id })).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringMatching(/delegation is 0/),
    });
  });

  it("the caller bounds the grant too: attach: false or naming another parent does not escape its delegation", async () => {
    h = await makeWsHarness({ defaults: { maxGrantableDelegation: 2 } });
    const cwd = await tempDir();
    const other = await h.runtime.start({ adapter: "echo", cwd });
    const spent = await h.runtime.start({ adapter: "echo", cwd, delegation: 0 });
    const token = tokenOf(h, spent.descriptor.id);
    const forbidden = {
      code: "forbidden",
      message: expect.stringContaining(`session ${spent.descriptor.id} may not spawn`),
    };
    await expect(h.runtime.start({ adapter: "echo", cwd, callerToken: token, attach: false })).rejects.toMatchObject(
      forbidden,
    );
    await expect(
      h.runtime.start({ adapter: "echo", cwd, callerToken: token, attach: false, delegation: 9 }),
    ).rejects.toMatchObject(forbidden);
    await expect(
      h.runtime.start({ adapter: "echo", cwd, callerToken: token, parentId: other.descriptor.id }),
    ).rejects.toMatchObject(forbidden);
    // An unlimited caller still grants no more than defaults.maxGrantableDelegation, nested or not.
    const free = tokenOf(h, other.descriptor.id);
    expect(
      (await h.runtime.start({ adapter: "echo", cwd, callerToken: free, attach: false, delegation: 9 })).descriptor,
    ).toMatchObject({ parentId: undefined, delegation: 2 });
    const three = await h.runtime.start({ adapter: "echo", cwd, delegation: 3 });
    expect(
      (
        await h.runtime.start({
          adapter: "echo",
          cwd,
          callerToken: tokenOf(h, three.descriptor.id),
          parentId: other.descriptor.id,
        })
      ).descriptor,
    ).toMatchObject({ parentId: other.descriptor.id, delegation: 2 });
    const one = await h.runtime.start({ adapter: "echo", cwd, delegation: 1 });
    expect(
      (await h.runtime.start({ adapter: "echo", cwd, callerToken: tokenOf(h, one.descriptor.id), attach: false }))
        .descriptor.delegation,
    ).toBe(0);
  });

  it("a stop that lands while the agent's process is starting stops that process", async () => {
    h = await makeWsHarness({
      acpAgents: { ...AGENTS, slowinit: fixtureAgent("echo-agent.mjs", { env: { FX_INIT_DELAY_MS: "1500" } }) },
    });
    const cwd = await tempDir();
    const starting = h.runtime.start({ adapter: "slowinit", cwd });
    starting.catch(() => undefined);
    await until(() => h!.runtime.list().length === 1, "the session is registered");
    const id = h.runtime.list()[0]!.id;
    await h.runtime.stop(id);
    await expect(starting).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringMatching(/stopped while its agent was starting/),
    });
    const pid = h.runtime.get(id).handle?.pid;
    expect(pid).toBeGreaterThan(0);
    await until(() => !processAlive(pid!), "the agent process is gone");
    expect(h.runtime.state(id)).toBe("ended");
  });
});

describe("spawn idempotency", () => {
  it("dedupe always: the same label and prompt return the live session (deduped) instead of a second one", async () => {
    h = await makeWsHarness();
    const cwd = await tempDir();
    const a = await h.runtime.start({ adapter: "echo", cwd, label: "fix", prompt: "do it" });
    const b = await h.runtime.start({ adapter: "echo", cwd, label: "fix", prompt: "do it" });
    expect(b.deduped).toBe(true);
    expect(b.descriptor.id).toBe(a.descriptor.id);
    expect(b.result).toBeUndefined();
    const c = await h.runtime.start({ adapter: "echo", cwd, label: "fix", prompt: "do it differently" });
    expect(c.deduped).toBeUndefined();
    expect(h.runtime.list()).toHaveLength(2);
  });

  it("two identical spawns at once make one session", async () => {
    h = await makeWsHarness();
    const cwd = await tempDir();
    const [a, b] = await Promise.all([
      h.runtime.start({ adapter: "echo", cwd, prompt: "same" }),
      h.runtime.start({ adapter: "echo", cwd, prompt: "same" }),
    ]);
    expect(a.descriptor.id).toBe(b.descriptor.id);
    expect([a.deduped, b.deduped].filter(Boolean)).toHaveLength(1);
  });

  it("two identical spawns at once make one session while git places the first one's worktree", async () => {
    h = await makeWsHarness({}, { SVC_WORKTREES_ISOLATION: "always" });
    const repo = await makeRepo(await tempDir());
    const [a, b] = await Promise.all([
      h.runtime.start({ adapter: "echo", cwd: repo, prompt: "same" }),
      h.runtime.start({ adapter: "echo", cwd: repo, prompt: "same" }),
    ]);
    expect(b.descriptor.id).toBe(a.descriptor.id);
    expect([a.deduped, b.deduped].filter(Boolean)).toHaveLength(1);
    expect(h.runtime.list()).toHaveLength(1);
    expect(sh(repo, "worktree", "list").trim().split("\n")).toHaveLength(2);
  });

  it("per-call dedupe: false opts out; on-request derives no key but honours an explicit idempotencyKey; a key frees when its session ends", async () => {
    h = await makeWsHarness();
    const cwd = await tempDir();
    const a = await h.runtime.start({ adapter: "echo", cwd, prompt: "p" });
    const b = await h.runtime.start({ adapter: "echo", cwd, prompt: "p", dedupe: false });
    expect(b.descriptor.id).not.toBe(a.descriptor.id);
    await h.setConfig({ spawn: { dedupe: "on-request" } });
    const c = await h.runtime.start({ adapter: "echo", cwd, prompt: "p" });
    expect(c.deduped).toBeUndefined();
    const k1 = await h.runtime.start({ adapter: "echo", cwd, idempotencyKey: "job-42" });
    const k2 = await h.runtime.start({ adapter: "echo", cwd, idempotencyKey: "job-42", prompt: "other" });
    expect(k2).toMatchObject({ deduped: true, descriptor: { id: k1.descriptor.id } });
    await h.runtime.stop(k1.descriptor.id);
    const k3 = await h.runtime.start({ adapter: "echo", cwd, idempotencyKey: "job-42" });
    expect(k3.deduped).toBeUndefined();
    expect(k3.descriptor.id).not.toBe(k1.descriptor.id);
  });
});
