/** The CLI's compile cache directory: this user's own, 0700, or no cache at all. */
import { chmod, mkdir, mkdtemp, rm, stat, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { enableCompileCache } from "../../../core/cli/compile-cache.js";

describe("enableCompileCache", () => {
  let tmp: string;
  let calls: Array<string | undefined>;
  const enable = (dir?: string) => void calls.push(dir);
  const dir = () => join(tmp, `svc-compile-cache-${process.getuid?.() ?? "user"}`);
  beforeEach(async () => {
    tmp = await mkdtemp(join(tmpdir(), "svc-cc-"));
    calls = [];
  });
  afterEach(() => rm(tmp, { recursive: true, force: true }));

  it("makes a 0700 directory of this user's and turns the cache on there", async () => {
    enableCompileCache({ enable, tmp, env: {} });
    expect(calls).toEqual([dir()]);
    expect((await stat(dir())).mode & 0o777).toBe(0o700);
    enableCompileCache({ enable, tmp, env: {} });
    expect(calls).toEqual([dir(), dir()]);
  });

  it("uses no cache in a directory others may write, or behind a symlink", async () => {
    await mkdir(dir());
    await chmod(dir(), 0o777);
    enableCompileCache({ enable, tmp, env: {} });
    await rm(dir(), { recursive: true });
    await mkdir(join(tmp, "elsewhere"), { mode: 0o700 });
    await symlink(join(tmp, "elsewhere"), dir());
    enableCompileCache({ enable, tmp, env: {} });
    expect(calls).toEqual([]);
  });

  it("leaves NODE_COMPILE_CACHE to Node, and does nothing on a Node without a compile cache", async () => {
    enableCompileCache({ enable, tmp, env: { NODE_COMPILE_CACHE: join(tmp, "mine") } });
    expect(calls).toEqual([undefined]);
    enableCompileCache({ enable: undefined, tmp, env: {} });
    await expect(stat(dir())).rejects.toThrow(/ENOENT/);
  });
});
