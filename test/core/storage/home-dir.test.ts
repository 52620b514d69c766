/** Creating `$SVC_HOME`: 0700 when svc creates it; an existing home keeps the mode its owner chose. */
import { chmod, mkdir, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureSvcHome } from "../../../core/storage/home-dir.js";

describe("ensureSvcHome", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "svc-home-dir-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const mode = async (p: string) => (await stat(p)).mode & 0o777;

  it("creates a missing home (and its missing parent) 0700 and returns its path", async () => {
    const home = join(root, "a", "home");
    expect(ensureSvcHome({ SVC_HOME: home })).toBe(home);
    expect(await mode(home)).toBe(0o700);
  });

  it("leaves an existing home's mode as it is", async () => {
    const home = join(root, "wide");
    await mkdir(home);
    await chmod(home, 0o750);
    ensureSvcHome({ SVC_HOME: home });
    expect(await mode(home)).toBe(0o750);
  });
});
