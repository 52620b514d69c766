/**
 * What `svc worktree rm|archive|gc` may delete, with real git: only trees svc made (its record, and
 * git's list or svc's marker vouching for the directory), only a branch svc made, and nothing of
 * the user's, whatever lies under the root.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { inventory } from "../../../core/workspaces/inventory.js";
import { MARKER_FILE } from "../../../core/workspaces/marker.js";
import { archiveTree, gc, pick, removeTree } from "../../../core/workspaces/reclaim.js";
import { RECORDS_FILE, WorktreeRecords } from "../../../core/workspaces/records.js";
import { makeRepo, makeWsHarness, sh, tempDir as makeTempDir, type WsHarness } from "./support.js";

let h: WsHarness | undefined;
const temps: string[] = [];
const tempDir = async (prefix?: string) => {
  const d = await makeTempDir(prefix);
  temps.push(d);
  return d;
};
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
  for (const d of temps.splice(0)) await rm(d, { recursive: true, force: true });
});

const DAY = 86_400_000;
const rows = async (w: WsHarness) =>
  (
    await inventory({
      home: w.home,
      roots: [join(w.home, "worktrees")],
      live: new Map(),
      now: Date.now(),
      sizes: false,
    })
  ).rows;
/** gc as if a month had passed since everything was made (the harness clock stands in 2026). */
const gcLater = async (w: WsHarness, dryRun = false) =>
  gc(w.home, await rows(w), { olderThanMs: 7 * DAY, dryRun, now: Date.now() + 30 * DAY });
const bySlug = (actions: Array<{ slug: string }>) => Object.fromEntries(actions.map((a) => [a.slug, a]));

/** A tree made by svc for a session that has ended. */
async function svcTree(w: WsHarness, repo: string, slug: string): Promise<string> {
  const s = await w.runtime.start({ adapter: "echo", cwd: repo, worktree: slug });
  await w.runtime.stop(s.descriptor.id);
  return s.descriptor.worktree!.path;
}

describe("worktree reclaim keeps what svc did not make", () => {
  it("rm deletes a branch svc made that holds no work, never an archived branch checked out again", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    await svcTree(h, repo, "fresh");
    expect(await removeTree(h.home, pick(await rows(h), "fresh"), { force: false })).toMatchObject({
      branch: "svc/fresh",
      branchDeleted: true,
    });
    expect(sh(repo, "branch", "--list", "svc/fresh").trim()).toBe("");

    const w = await svcTree(h, repo, "w");
    await writeFile(join(w, "work.txt"), "work\n");
    const archived = await archiveTree(h.home, pick(await rows(h), "w"), { force: false });
    expect(archived.commit).toMatch(/^[0-9a-f]{40}$/);
    // The marker is never part of the archived work.
    expect(sh(repo, "show", "--name-only", "--format=", archived.commit!).trim()).toBe("work.txt");
    const again = await h.runtime.start({ adapter: "echo", cwd: repo, worktree: "w" });
    expect(existsSync(join(again.descriptor.worktree!.path, "work.txt"))).toBe(true);
    await h.runtime.stop(again.descriptor.id);
    expect(await removeTree(h.home, pick(await rows(h), "w"), { force: false })).toMatchObject({
      branch: "svc/w",
      branchDeleted: false,
    });
    expect(sh(repo, "rev-parse", "refs/heads/svc/w").trim()).toBe(archived.commit);
  });

  it("a new tree carries svc's marker, which git never shows or commits, and its record a checksum", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const tree = await svcTree(h, repo, "marked");
    const marker = JSON.parse(await readFile(join(tree, MARKER_FILE), "utf8")) as { id: string; path: string };
    const [rec] = await new WorktreeRecords(h.home).list();
    expect(rec).toMatchObject({
      path: tree,
      marker: marker.id,
      checksum: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(marker.path).toBe(tree);
    expect(sh(tree, "status", "--porcelain", "--untracked-files=all")).toBe("");
    expect(sh(repo, "status", "--porcelain", "--untracked-files=all")).toBe("");
    // An agent's `git add -A` leaves it out too; the exclude line is written once however many trees.
    await writeFile(join(tree, "agent.txt"), "x\n");
    sh(tree, "add", "-A");
    expect(sh(tree, "diff", "--cached", "--name-only").trim()).toBe("agent.txt");
    await svcTree(h, repo, "second");
    const exclude = readFileSync(join(repo, ".git", "info", "exclude"), "utf8");
    expect(exclude.match(/^\/\.svc-worktree\*$/gm)).toHaveLength(1);
  });

  it("gc and rm leave git checkouts, hand-made worktrees and plain folders svc has no record of, --force or not", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const under = join(h.home, "worktrees", "app");
    await mkdir(under, { recursive: true });
    sh(under, "clone", "-q", repo, join(under, "clone"));
    await writeFile(join(under, "clone", "notes.txt"), "mine\n");
    sh(repo, "worktree", "add", "-q", "-b", "mine", join(under, "handmade"));
    await mkdir(join(under, "stray", "deep"), { recursive: true });
    await writeFile(join(under, "stray", "deep", "keep.txt"), "keep\n");
    const mine = await svcTree(h, repo, "svc-made");
    await rm(join(repo, ".git", "worktrees", "svc-made"), { recursive: true }); // git forgets it; svc's marker is still in it

    const planned = bySlug((await gcLater(h, true)).actions);
    const out = bySlug((await gcLater(h)).actions);
    expect(out).toEqual(planned);
    for (const slug of ["clone", "handmade", "stray"])
      expect(out[slug]).toMatchObject({
        action: "left",
        state: "foreign",
        reason: expect.stringContaining("not svc's: svc has no record of it"),
      });
    expect(out["svc-made"]).toMatchObject({ action: "removed", state: "orphaned" });
    expect(existsSync(mine)).toBe(false);
    expect(readFileSync(join(under, "clone", "notes.txt"), "utf8")).toBe("mine\n");
    expect(existsSync(join(under, "handmade", "README.md"))).toBe(true);
    expect(readFileSync(join(under, "stray", "deep", "keep.txt"), "utf8")).toBe("keep\n");

    expect(pick(await rows(h), "./app/clone/", join(h.home, "worktrees")).path).toBe(join(under, "clone"));
    for (const slug of ["clone", "handmade", "stray"]) {
      for (const force of [false, true]) {
        await expect(removeTree(h.home, pick(await rows(h), slug), { force })).rejects.toMatchObject({
          code: "conflict",
          message: expect.stringMatching(/is not svc's: svc has no record of it/),
        });
        await expect(archiveTree(h.home, pick(await rows(h), slug), { force })).rejects.toMatchObject({
          code: "conflict",
        });
      }
    }
    expect(
      existsSync(join(under, "clone", "notes.txt")) &&
        existsSync(join(under, "handmade")) &&
        existsSync(join(under, "stray")),
    ).toBe(true);
  });

  it("a recorded path whose directory was replaced by a user's folder or a symlink is left; only the stale record goes", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const replaced = await svcTree(h, repo, "replaced");
    const linked = await svcTree(h, repo, "linked");
    const userFiles = await tempDir("svc-user-");
    await writeFile(join(userFiles, "thesis.tex"), "years of work\n");
    for (const tree of [replaced, linked]) await rm(tree, { recursive: true, force: true });
    await mkdir(replaced);
    await writeFile(join(replaced, "mine.txt"), "mine\n");
    await symlink(userFiles, linked);

    const byPath = Object.fromEntries((await rows(h)).map((r) => [r.slug, r]));
    expect(byPath.replaced).toMatchObject({
      state: "foreign",
      owned: false,
      notOwned: expect.stringMatching(/carries no svc marker/),
    });
    expect(byPath.linked).toMatchObject({
      state: "foreign",
      owned: false,
      notOwned: expect.stringMatching(/symbolic link/),
    });
    for (const slug of ["replaced", "linked"]) {
      await expect(removeTree(h.home, pick(await rows(h), slug), { force: true })).rejects.toMatchObject({
        message: expect.stringMatching(/not svc's/),
      });
    }
    const out = bySlug((await gcLater(h)).actions);
    expect(out.replaced).toMatchObject({
      action: "record-dropped",
      reason: expect.stringContaining("the folder is left as it is"),
    });
    expect(out.linked).toMatchObject({
      action: "record-dropped",
      reason: expect.stringContaining("git keeps a stale entry for it (`git -C"),
    });
    expect(readFileSync(join(replaced, "mine.txt"), "utf8")).toBe("mine\n");
    expect(readFileSync(join(linked, "thesis.tex"), "utf8")).toBe("years of work\n");
    expect(readFileSync(join(userFiles, "thesis.tex"), "utf8")).toBe("years of work\n");
    // git's stale entries for the trees svc made stay (git will not drop an entry whose path holds a folder): no prune of the user's repository.
    expect(sh(repo, "worktree", "list", "--porcelain")).toMatch(
      /replaced\nHEAD [0-9a-f]+\nbranch refs\/heads\/svc\/replaced\nprunable/,
    );
  });

  it("removing an orphan svc made never follows a symlink inside it into the user's files", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const tree = await svcTree(h, repo, "orphan");
    const userFiles = await tempDir("svc-user-");
    await writeFile(join(userFiles, "keep.txt"), "keep\n");
    await symlink(userFiles, join(tree, "data"));
    await rm(join(repo, ".git", "worktrees", "orphan"), { recursive: true });
    // rm without --force refuses: git cannot say whether the orphan holds work.
    await expect(removeTree(h.home, pick(await rows(h), "orphan"), { force: false })).rejects.toMatchObject({
      message: expect.stringMatching(/git no longer lists/),
    });
    expect((await gcLater(h)).actions).toEqual([
      expect.objectContaining({ slug: "orphan", action: "removed", state: "orphaned" }),
    ]);
    expect(existsSync(tree)).toBe(false);
    expect(readFileSync(join(userFiles, "keep.txt"), "utf8")).toBe("keep\n");
  });

  it("gc removes only trees in which nothing changed for --older-than, and says why it left the others", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const old = await svcTree(h, repo, "old");
    const touched = await svcTree(h, repo, "touched");
    const dirty = await svcTree(h, repo, "dirty");
    await writeFile(join(dirty, "wip.txt"), "wip\n");
    const now = Date.now() + 30 * DAY;
    await utimes(join(touched, "README.md"), new Date(now - DAY), new Date(now - DAY));
    const out = bySlug((await gc(h.home, await rows(h), { olderThanMs: 7 * DAY, dryRun: false, now })).actions);
    expect(out.old).toMatchObject({
      action: "removed",
      reason: expect.stringMatching(/^clean; nothing in it changed for \d+d$/),
    });
    expect(out.touched).toMatchObject({
      action: "left",
      reason: "something in it changed 24h ago, within --older-than",
    });
    expect(out.dirty).toMatchObject({ action: "left", reason: expect.stringContaining("uncommitted changes") });
    expect(existsSync(old)).toBe(false);
    expect(existsSync(join(touched, "README.md")) && existsSync(join(dirty, "wip.txt"))).toBe(true);
  });

  it("records that are damaged or edited by hand never name a tree svc may delete; damage is reported", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const kept = await svcTree(h, repo, "kept");
    const legacy = await svcTree(h, repo, "legacy");
    sh(repo, "branch", "feature");
    const file = join(h.home, RECORDS_FILE);
    const doc = JSON.parse(await readFile(file, "utf8")) as { trees: Array<Record<string, unknown>> };
    const userDir = join(await tempDir("svc-user-"), "notes");
    await mkdir(userDir);
    await writeFile(join(userDir, "2024.md"), "diary\n");
    for (const t of doc.trees) {
      if (t.slug === "kept") t.baseCommit = "0".repeat(40); // a changed field: the checksum no longer holds
      // As svc wrote records before markers; and, by hand, a branch of the user's as if svc had made it.
      if (t.slug === "legacy")
        delete t.checksum,
          delete t.marker,
          (t.branch = "feature"),
          (t.baseCommit = sh(repo, "rev-parse", "HEAD").trim());
    }
    // Written by hand: a user's folder, the main checkout, and one that looks like svc's own but is not.
    doc.trees.push({
      path: userDir,
      repo,
      repoName: "app",
      slug: "notes",
      branch: "svc/notes",
      baseCommit: "",
      root: join(userDir, ".."),
      createdAt: 0,
    });
    doc.trees.push({
      path: repo,
      repo,
      repoName: "app",
      slug: "main",
      branch: "main",
      baseCommit: "",
      root: join(repo, ".."),
      createdAt: 0,
    });
    await writeFile(file, JSON.stringify(doc));

    const inv = await inventory({ home: h.home, roots: [], live: new Map(), now: Date.now(), sizes: false });
    expect(inv.warnings).toEqual([
      expect.stringMatching(/the record of .*kept is damaged: its checksum does not match/),
    ]);
    const r = Object.fromEntries(inv.rows.map((x) => [x.slug, x]));
    expect(r.kept).toMatchObject({ integrity: "damaged", owned: false, state: "foreign" });
    expect(r.legacy).toMatchObject({ integrity: "unchecked", owned: true, ownedBy: "git", state: "idle" });
    expect(r.notes).toMatchObject({ integrity: "unchecked", owned: false });
    expect(r.main).toMatchObject({ owned: false, notOwned: expect.stringContaining("does not list it as a worktree") });
    for (const slug of ["kept", "notes", "main"])
      await expect(removeTree(h.home, r[slug]!, { force: true })).rejects.toMatchObject({
        message: expect.stringMatching(/not svc's/),
      });

    const out = bySlug(
      (await gc(h.home, inv.rows, { olderThanMs: 0, dryRun: false, now: Date.now() + 30 * DAY })).actions,
    );
    expect(out.kept).toMatchObject({
      action: "left",
      reason: expect.stringContaining("its record in worktrees.json is damaged"),
    });
    expect(out.legacy).toMatchObject({ action: "removed" }); // git vouches for it
    expect(out.notes).toMatchObject({
      action: "record-dropped",
      reason: expect.stringContaining("the folder is left"),
    });
    expect(out.main).toMatchObject({ action: "record-dropped" });
    expect(existsSync(kept) && existsSync(join(repo, "README.md"))).toBe(true);
    expect(existsSync(legacy)).toBe(false);
    // Only a branch in svc's namespace made for that very tree is ever deleted.
    expect(sh(repo, "branch", "--list", "feature").trim()).toBe("feature");
    expect(readFileSync(join(userDir, "2024.md"), "utf8")).toBe("diary\n");
    // The damaged record stays for the user to see.
    expect((await new WorktreeRecords(h.home).read()).records.map((x) => `${x.record.slug}:${x.integrity}`)).toEqual([
      "kept:damaged",
    ]);
  });

  it("a records file that is not JSON: nothing is trusted, nothing removed, the damage reported; the next tree sets it aside", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const tree = await svcTree(h, repo, "first");
    const file = join(h.home, RECORDS_FILE);
    const text = await readFile(file, "utf8");
    await writeFile(file, text.slice(0, Math.floor(text.length / 2)));
    const inv = await inventory({
      home: h.home,
      roots: [join(h.home, "worktrees")],
      live: new Map(),
      now: Date.now(),
      sizes: false,
    });
    expect(inv.warnings).toEqual([expect.stringMatching(/worktrees\.json is damaged \(not valid JSON/)]);
    expect(inv.rows).toEqual([expect.objectContaining({ path: tree, state: "foreign", recorded: false })]);
    expect((await gc(h.home, inv.rows, { olderThanMs: 0, dryRun: false, now: Date.now() + 30 * DAY })).actions).toEqual(
      [expect.objectContaining({ action: "left" })],
    );
    expect(existsSync(tree)).toBe(true);

    await svcTree(h, repo, "second");
    const view = await new WorktreeRecords(h.home).read();
    expect(view.records.map((x) => x.record.slug)).toEqual(["second"]);
    expect(view.warnings).toEqual([
      expect.stringMatching(/worktrees\.json\.damaged-\S+ is a damaged records file svc set aside/),
    ]);
  });

  it("GIT_DIR in svc's environment (svc run from a git hook) does not point its git at another repository", async () => {
    h = await makeWsHarness();
    const repo = await makeRepo(await tempDir());
    const other = await makeRepo(await tempDir(), "other");
    const tree = await svcTree(h, repo, "hooked");
    const saved = process.env.GIT_DIR;
    process.env.GIT_DIR = join(other, ".git");
    try {
      expect((await rows(h)).find((r) => r.path === tree)).toMatchObject({ state: "idle", owned: true });
      await removeTree(h.home, pick(await rows(h), "hooked"), { force: false });
    } finally {
      if (saved === undefined) delete process.env.GIT_DIR;
      else process.env.GIT_DIR = saved;
    }
    expect(existsSync(tree)).toBe(false);
    expect(existsSync(join(other, "README.md"))).toBe(true);
  });
});
