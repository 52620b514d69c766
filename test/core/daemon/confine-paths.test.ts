/** pairing.allowedRoots: where a caller who is not the owner may make the daemon work. */
import { mkdir, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { confineToRoots } from "../../../core/daemon/confine-paths.js";

const OPERATE = "remote:pairing:p:operate";

describe("confineToRoots", () => {
  let base: string;
  let root: string;
  beforeAll(async () => {
    base = await realpath(await mkdtemp(join(tmpdir(), "svc-confine-")));
    root = join(base, "root");
    await mkdir(join(root, "a"), { recursive: true });
    await mkdir(join(base, "root-sibling"));
    await symlink(join(base, "root-sibling"), join(root, "link-out"));
    await symlink(join(root, "a"), join(base, "link-in"));
  });
  afterAll(() => rm(base, { recursive: true, force: true }));

  it("lets the owner work anywhere", async () => {
    for (const p of ["loopback", "token:stable", "token:boot"])
      await expect(confineToRoots(p, [], { cwd: "/" })).resolves.toBeUndefined();
  });

  it("keeps others under the roots: inside, a root itself and a path not made yet pass", async () => {
    for (const cwd of [root, join(root, "a"), join(root, "a", "not-yet", "deeper"), join(base, "link-in")]) {
      await expect(confineToRoots(OPERATE, [root], { cwd }), cwd).resolves.toBeUndefined();
    }
  });

  it("refuses what lies outside, through '..', through a symlink, or beside the root with a shared prefix", async () => {
    for (const cwd of [
      base,
      join(root, "..", "root-sibling"),
      join(root, "link-out"),
      join(root, "link-out", "x"),
      join(base, "root-sibling"),
      "/etc",
    ]) {
      await expect(confineToRoots(OPERATE, [root], { cwd }), cwd).rejects.toMatchObject({
        code: "forbidden",
        message: expect.stringContaining(`cwd ${cwd} is not under pairing.allowedRoots (${root})`),
      });
    }
  });

  it("says what to set when there are no roots, asks for a required path, refuses a relative one", async () => {
    await expect(confineToRoots(OPERATE, [], { cwd: root })).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining("pairing.allowedRoots, which is empty"),
    });
    await expect(confineToRoots(OPERATE, [root], { cwd: undefined }, ["cwd"])).rejects.toMatchObject({
      message: expect.stringContaining("must give cwd"),
    });
    await expect(confineToRoots(OPERATE, [root], { worktreeRoot: undefined }, ["cwd"])).resolves.toBeUndefined();
    await expect(confineToRoots(OPERATE, [root], { cwd: "a" })).rejects.toMatchObject({ code: "invalid_input" });
  });
});
