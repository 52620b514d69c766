import { realpath } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { until } from "../sessions/harness.js";
import { makeRepo, makeWsHarness, sh, tempDir, type WsHarness } from "./support.js";

let h: WsHarness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** The cwd the agent itself reports (the echo fixture answers `env?` with its session/new cwd). */
async function agentCwd(w: WsHarness, id: string): Promise<string> {
  const r = w.runtime.prompt(id, "env?", { sender: { kind: "human" }, urgency: "queue" });
  const res = await w.runtime.waitFor(id, r.promptId);
  return JSON.parse(res.text).cwd;
}

describe("worktree isolation with real git", () => {
  it("on-request: plain without `worktree`; a slug makes <root>/<repo>/<slug> on branch svc/<slug> from HEAD", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const plain = await h.runtime.start({ adapter: "echo", cwd: repo });
    expect(plain.descriptor.worktree).toBeUndefined();
    expect(plain.descriptor.cwd).toBe(repo);
    const head = sh(repo, "rev-parse", "HEAD").trim();
    const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "feat-x" });
    const path = join(h.home, "worktrees", "app", "feat-x");
    expect(descriptor.worktree).toEqual({ path, branch: "svc/feat-x", repo, slug: "feat-x", baseCommit: head });
    expect(descriptor.cwd).toBe(path);
    expect(await agentCwd(h, descriptor.id)).toBe(path);
    expect(sh(repo, "worktree", "list", "--porcelain")).toContain(`worktree ${path}\n`);
    expect(sh(path, "rev-parse", "--abbrev-ref", "HEAD").trim()).toBe("svc/feat-x");
  });

  it("keeps the cwd's place in the repository and never removes the tree when the session ends", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir(), "app", { "src/a.ts": "x\n" });
    const { descriptor } = await h.runtime.start({
      adapter: "echo",
      cwd: join(repo, "src"),
      worktree: true,
      label: "Fix Bug",
    });
    expect(descriptor.worktree!.slug).toMatch(/^fix-bug-[0-9a-z]{8}$/);
    expect(descriptor.cwd).toBe(join(descriptor.worktree!.path, "src"));
    await h.runtime.stop(descriptor.id);
    expect(await realpath(descriptor.worktree!.path)).toBe(descriptor.worktree!.path);
  });

  it("always: a root spawn in a repo is isolated; outside any repo it spawns plain; a child inherits its parent's tree", async () => {
    h = await makeWsHarness({ worktrees: { isolation: "always" } });
    const dir = await tempDir();
    const repo = await makeRepo(dir);
    const parent = await h.runtime.start({ adapter: "echo", cwd: repo, label: "orchestrator" });
    expect(parent.descriptor.worktree?.path).toMatch(new RegExp(`^${h.home}/worktrees/app/orchestrator-`));
    const child = await h.runtime.start({ adapter: "echo", parentId: parent.descriptor.id });
    expect(child.descriptor.parentId).toBe(parent.descriptor.id);
    expect(child.descriptor.worktree).toEqual(parent.descriptor.worktree);
    expect(child.descriptor.cwd).toBe(parent.descriptor.worktree!.path);
    const outside = await tempDir();
    const plain = await h.runtime.start({ adapter: "echo", cwd: outside });
    expect(plain.descriptor.worktree).toBeUndefined();
    expect(plain.descriptor.cwd).toBe(outside);
    expect(sh(repo, "worktree", "list").trim().split("\n")).toHaveLength(2);
  });

  it("never: an explicit worktree is rejected, naming the setting and its source", async () => {
    h = await makeWsHarness({}, { SVC_WORKTREES_ISOLATION: "never" });
    const repo = await makeRepo(await tempDir());
    await expect(h.runtime.start({ adapter: "echo", cwd: repo, worktree: "x" })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringMatching(/isolation is "never" \(env SVC_WORKTREES_ISOLATION\)/),
    });
    const plain = await h.runtime.start({ adapter: "echo", cwd: repo });
    expect(plain.descriptor.worktree).toBeUndefined();
  });

  it("an explicit worktree outside a repository, or with a bad slug, is a clear error", async () => {
    h = await makeWsHarness();
    await expect(h.runtime.start({ adapter: "echo", cwd: await tempDir(), worktree: "x" })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringMatching(/not inside a git repository/),
    });
    const repo = await makeRepo(await tempDir());
    await expect(h.runtime.start({ adapter: "echo", cwd: repo, worktree: "../evil" })).rejects.toMatchObject({
      code: "invalid_input",
      message: expect.stringMatching(/slug "..\/evil" is invalid/),
    });
  });

  it("root precedence: --root over SVC_WORKTREES_ROOT over worktrees.root over $SVC_HOME/worktrees", async () => {
    const dir = await tempDir();
    const repo = await makeRepo(dir);
    h = await makeWsHarness(
      { worktrees: { root: join(dir, "from-field") } },
      { SVC_WORKTREES_ROOT: join(dir, "from-env") },
    );
    const env = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "a" });
    expect(env.descriptor.worktree!.path).toBe(join(dir, "from-env", "app", "a"));
    const flag = await h.runtime.start({
      adapter: "echo",
      cwd: repo,
      worktree: "b",
      worktreeRoot: join(dir, "from-flag"),
    });
    expect(flag.descriptor.worktree!.path).toBe(join(dir, "from-flag", "app", "b"));
    await h.cleanup();
    h = await makeWsHarness({ worktrees: { root: join(dir, "from-field") } });
    const field = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "c" });
    expect(field.descriptor.worktree!.path).toBe(join(dir, "from-field", "app", "c"));
  });

  it("a slug in use by a live session is refused; once that session ended, the tree is reused", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const first = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "shared" });
    await expect(h.runtime.start({ adapter: "echo", cwd: repo, worktree: "shared" })).rejects.toMatchObject({
      code: "conflict",
    });
    await h.runtime.stop(first.descriptor.id);
    await until(() => h!.runtime.state(first.descriptor.id) === "ended", "first session ended");
    const again = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "shared" });
    expect(again.descriptor.worktree).toEqual(first.descriptor.worktree);
  });

  it("two spawns naming the same slug at the same instant: one gets the tree, the other a conflict", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const both = await Promise.allSettled([
      h.runtime.start({ adapter: "echo", cwd: repo, worktree: "race", prompt: "one" }),
      h.runtime.start({ adapter: "echo", cwd: repo, worktree: "race", prompt: "two" }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(both.find((r) => r.status === "rejected")).toMatchObject({ reason: { code: "conflict" } });
    expect(h.runtime.list().filter((d) => d.state !== "ended")).toHaveLength(1);
  });
});
