/**
 * What `svc worktree rm|gc` may delete, with real git: only a branch svc made for the tree, and
 * never a git checkout svc has no record of.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inventory } from "../../../core/workspaces/inventory.js";
import { archiveTree, gc, pick, removeTree } from "../../../core/workspaces/reclaim.js";
import { makeRepo, makeWsHarness, sh, tempDir, type WsHarness } from "./support.js";

let h: WsHarness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const rows = (w: WsHarness) => inventory({ home: w.home, roots: [join(w.home, "worktrees")], live: new Map(), now: Date.now(), sizes: false });

describe("worktree reclaim keeps what svc did not make", () => {
  it("rm deletes a branch svc made that holds no work, never an archived branch checked out again", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const fresh = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "fresh" });
    await h.runtime.stop(fresh.descriptor.id);
    expect(await removeTree(h.home, pick(await rows(h), "fresh"), { force: false })).toMatchObject({ branch: "svc/fresh", branchDeleted: true });
    expect(sh(repo, "branch", "--list", "svc/fresh").trim()).toBe("");

    const first = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "w" });
    await h.runtime.stop(first.descriptor.id);
    await writeFile(join(first.descriptor.worktree!.path, "work.txt"), "work\n");
    const archived = await archiveTree(h.home, pick(await rows(h), "w"), { force: false });
    expect(archived.commit).toMatch(/^[0-9a-f]{40}$/);
    const again = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "w" });
    expect(existsSync(join(again.descriptor.worktree!.path, "work.txt"))).toBe(true);
    await h.runtime.stop(again.descriptor.id);
    expect(await removeTree(h.home, pick(await rows(h), "w"), { force: false })).toMatchObject({ branch: "svc/w", branchDeleted: false });
    expect(sh(repo, "rev-parse", "refs/heads/svc/w").trim()).toBe(archived.commit);
  });

  it("gc skips git checkouts svc has no record of (a clone, a hand-made worktree); rm refuses them without --force", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const under = join(h.home, "worktrees", "app");
    await mkdir(under, { recursive: true });
    sh(under, "clone", "-q", repo, join(under, "clone"));
    await writeFile(join(under, "clone", "notes.txt"), "mine\n");
    sh(repo, "worktree", "add", "-q", "-b", "mine", join(under, "handmade"));
    await mkdir(join(under, "stray"));

    const out = await gc(h.home, await rows(h), { olderThanMs: 0, dryRun: false });
    const by = Object.fromEntries(out.actions.map((a) => [a.slug, a]));
    expect(by.clone).toMatchObject({ action: "skipped", reason: expect.stringContaining("git checkout svc has no record of") });
    expect(by.handmade).toMatchObject({ action: "skipped" });
    expect(by.stray).toMatchObject({ action: "removed" });
    expect(existsSync(join(under, "clone", "notes.txt"))).toBe(true);
    expect(existsSync(join(under, "handmade", "README.md"))).toBe(true);
    expect(existsSync(join(under, "stray"))).toBe(false);

    expect(pick(await rows(h), "./app/clone/", join(h.home, "worktrees")).path).toBe(join(under, "clone"));
    await expect(removeTree(h.home, pick(await rows(h), "clone"), { force: false })).rejects.toMatchObject({ code: "conflict", message: expect.stringMatching(/git checkout svc did not make/) });
    expect(existsSync(join(under, "clone"))).toBe(true);
    await removeTree(h.home, pick(await rows(h), "clone"), { force: true });
    expect(existsSync(join(under, "clone"))).toBe(false);
  });
});
