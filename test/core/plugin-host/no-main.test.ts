/** Issue 13: a package without "main" loads without Node's DEP0151 deprecation warning. */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.js";
import { makeSandbox, type Sandbox } from "./sandbox.js";

describe("a plugin package with no main field", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await makeSandbox();
    const dir = await sb.place("install", "svc-fixture-provider");
    const pj = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
    delete pj.main;
    await writeFile(join(dir, "package.json"), JSON.stringify(pj));
    await sb.writeConfig({ adapters: ["svc-fixture-provider"] });
  });
  afterAll(() => sb.cleanup());

  it("is found and loaded, and nothing prints DEP0151", async () => {
    const r = await runCli(["adapters", "ls", "--load"], { home: sb.home, cwd: sb.cwd, env: sb.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/provider +fixture-ticks +wins/);
    expect(r.stderr).not.toMatch(/DEP0151|DeprecationWarning/);
  });
});
