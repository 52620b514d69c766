/**
 * `svc adapters install` as the very first command on a machine: npm must not be the one to
 * create `$SVC_HOME` (it would be 0755); svc creates it 0700 first, so `svc doctor` has nothing
 * to say about the home's mode.
 */
import { cp, mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../../support/cli.js";
import { PACKAGES } from "../../plugin-host/sandbox.js";

describe("runNpm into the default install location", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "svc-npm-home-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("`svc adapters install <folder>` into a missing $SVC_HOME creates it 0700; svc doctor gives no warning about it", async () => {
    const home = join(root, "fresh", "home"); // neither it nor its parent exists yet
    const src = join(root, "src", "svc-fixture-redactor");
    await cp(join(PACKAGES, "svc-fixture-redactor"), src, { recursive: true });
    const r = await runCli(["adapters", "install", src], { home, cwd: root, timeoutMs: 90_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("installed svc-fixture-redactor@1.0.0");
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    const doctor = await runCli(["doctor", "--json"], { home, cwd: root });
    const findings = (JSON.parse(doctor.stdout) as { findings: Array<{ file: string; message: string }> }).findings;
    expect(findings.filter((f) => f.file === "." || f.message.includes("$SVC_HOME"))).toEqual([]);
  });
});
