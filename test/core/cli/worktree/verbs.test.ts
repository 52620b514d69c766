/** `svc worktree gc --older-than` through the real CLI: the one duration grammar, a bare number in days. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, runCli } from "../../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-wt-gc-")));
afterEach(() => cleanup());

describe("svc worktree gc --older-than", () => {
  it.each(["30s", "1w", "1d", "1.5d", "2 days", "90 minutes", "7"])(
    "reads %j (30s and spelled-out units were refused before)",
    async (age) => {
      const r = await runCli(["worktree", "gc", "--older-than", age, "--dry-run", "--json"], { home });
      expect(r.stderr).toBe("");
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ dryRun: true, actions: [] });
    },
  );

  it.each([
    ["7x", "not a duration"],
    ["-1d", "a negative duration"],
    ["1M", "M could mean minutes or months"],
  ])("refuses %j in the shared format, exit 2", async (age, problem) => {
    const r = await runCli(["worktree", "gc", "--older-than", age, "--dry-run"], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--older-than ${JSON.stringify(age)} is invalid: ${problem}`);
    expect(r.stderr).toContain("; allowed: a duration of 0 or more, e.g. 30m, 12h, 7d, 2w: ");
    expect(r.stderr).toContain("a bare number is days");
  });

  it("says the grammar in its help", async () => {
    const r = await runCli(["worktree", "gc", "--help"], { home });
    expect(r.stdout.replace(/\s+/g, " ")).toContain(
      "a number and a unit (ms, s, m, h, d, w or y; spelled out too, as in 2 hours); a bare number is days",
    );
  });
});
