import { appendFile, readdir, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDedupFiles } from "../../../core/sentinels/dedup-check.js";
import { SentinelDedup } from "../../../core/sentinels/dedup.js";
import { makeTempHome } from "../../support/cli.js";

describe("checkDedupFiles (svc doctor, read-only)", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  const dir = () => join(home, "sentinels-dedup");
  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-dedup-check-", { inMemory: true }));
    const dedup = new SentinelDedup(home, { seen: 10, compactAfter: 5 });
    for (let i = 0; i < 12; i++) await dedup.recordDelivery("snt_a", `e${i}`, "now");
    await dedup.close();
  });
  afterEach(() => cleanup());

  it("finds nothing wrong in files the store wrote", async () => {
    expect(await readdir(dir())).toEqual(expect.arrayContaining(["snt_a.json", "snt_a.log"]));
    expect(await checkDedupFiles(home, new Set(["snt_a"]))).toEqual([]);
  });

  it("a truncated or deleted snapshot, a damaged line: errors naming the file; a torn tail: info", async () => {
    await truncate(join(dir(), "snt_a.json"), 10);
    await appendFile(join(dir(), "snt_a.log"), 'deadbeef {"q":99}\n0000 torn');
    const found = await checkDedupFiles(home, new Set(["snt_a"]));
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ severity: "error", file: "sentinels-dedup/snt_a.json" }),
        expect.objectContaining({
          severity: "error",
          file: "sentinels-dedup/snt_a.log",
          message: expect.stringMatching(/^line \d+ fail/),
        }),
        expect.objectContaining({
          severity: "info",
          file: "sentinels-dedup/snt_a.log",
          message: expect.stringContaining("torn"),
        }),
      ]),
    );
    // Read-only: the torn tail and the damaged snapshot are still there, nothing set aside.
    expect((await readdir(dir())).sort()).toEqual(["snt_a.json", "snt_a.log", "snt_a.log.length"]);
  });

  it("files of a sentinel that is gone, and .damaged copies, are warnings", async () => {
    await writeFile(join(dir(), "snt_a.json.damaged-1"), "x");
    const found = await checkDedupFiles(home, new Set());
    expect(found.map((f) => [f.severity, f.file])).toEqual([
      ["warn", "sentinels-dedup/snt_a.json"],
      ["warn", "sentinels-dedup/snt_a.json.damaged-1"],
    ]);
  });
});
