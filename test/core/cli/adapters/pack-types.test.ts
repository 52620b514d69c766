/**
 * The types-only `@svc/plugin-api` packed by the real npm for `svc adapters init --typescript`: a
 * tarball of declarations (no JavaScript of svc), and a clear error when the build never wrote them.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packTypesPackage } from "../../../../core/cli/adapters/pack-types.js";

describe("packTypesPackage", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-pack-types-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("writes the built dist/plugin-api-types as an npm tarball at the path given", () => {
    const to = join(dir, "vendor", "api.tgz");
    packTypesPackage(to);
    const listed = execFileSync("tar", ["-tzf", to], { encoding: "utf8" }).split("\n");
    expect(listed).toContain("package/package.json");
    expect(listed).toContain("package/core/plugin-api/index.d.ts");
    expect(listed.filter((f) => f.endsWith(".js"))).toEqual([]);
  });

  it("names the missing folder and the fix when there is nothing to pack, and writes nothing", () => {
    const to = join(dir, "none", "api.tgz");
    expect(() => packTypesPackage(to, join(dir, "no-types"))).toThrow(
      /the types of @svc\/plugin-api are missing from .*no-types \(in a checkout of svc, run npm run build first\)/,
    );
    expect(existsSync(join(dir, "none"))).toBe(false);
  });
});
