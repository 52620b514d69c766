/**
 * svc's records of the worktrees it made: each record sealed with a checksum, damage seen and
 * reported, never laundered by a later write, a file that is not JSON set aside rather than lost.
 */
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import {
  checkRecord,
  RECORDS_FILE,
  sealRecord,
  WorktreeRecords,
  type WorktreeRecord,
} from "../../../core/workspaces/records.js";
import { tempDir } from "./support.js";

let home = "";
afterEach(async () => {
  if (home) await rm(home, { recursive: true, force: true });
  home = "";
});

const rec = (slug: string, extra: Partial<WorktreeRecord> = {}): WorktreeRecord => ({
  path: `/trees/app/${slug}`,
  repo: "/code/app",
  repoName: "app",
  slug,
  branch: `svc/${slug}`,
  baseCommit: "a".repeat(40),
  root: "/trees",
  createdAt: 1_700_000_000_000,
  sessionId: "ses_01",
  branchCreated: true,
  marker: "0123456789abcdef0123456789abcdef",
  ...extra,
});
const raw = async () =>
  JSON.parse(await readFile(join(home, RECORDS_FILE), "utf8")) as { trees: Array<Record<string, unknown>> };

describe("worktree records", () => {
  it("a sealed record verifies; any change to any field makes it damaged", () => {
    expect(checkRecord(sealRecord(rec("w")))).toMatchObject({ integrity: "verified" });
    const fields = Object.keys(rec("w")) as Array<keyof WorktreeRecord>;
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.oneof(fc.string(), fc.integer(), fc.boolean()), (key, value) => {
        const sealed = sealRecord(rec("w")) as unknown as Record<string, unknown>;
        fc.pre(JSON.stringify(sealed[key]) !== JSON.stringify(value));
        const r = checkRecord({ ...sealed, [key]: value });
        // A path that is no longer a string names nothing: no record at all (readers warn of it).
        if (r === undefined) expect(key).toBe("path");
        else expect(r.integrity).toBe("damaged");
      }),
    );
    // A field added by hand counts as a change too; key order does not.
    const sealed = sealRecord(rec("w"));
    expect(checkRecord({ ...sealed, extra: 1 })?.integrity).toBe("damaged");
    expect(checkRecord(Object.fromEntries(Object.entries(sealed).reverse()))?.integrity).toBe("verified");
  });

  it("a record with a bad shape is damaged and says where; one without a checksum is unchecked; one without a path is no record", () => {
    expect(checkRecord({ ...rec("w"), path: "relative/path" })).toMatchObject({
      integrity: "damaged",
      problem: "path must be an absolute path",
    });
    expect(checkRecord({ ...rec("w"), createdAt: "yesterday" })).toMatchObject({
      integrity: "damaged",
      problem: expect.stringMatching(/^createdAt /),
    });
    expect(checkRecord({ ...rec("w"), marker: "../../x" })).toMatchObject({
      integrity: "damaged",
      problem: "marker must be 32 hex digits",
    });
    expect(checkRecord(rec("w"))).toMatchObject({ integrity: "unchecked" });
    for (const bad of [null, 7, "x", [], {}, { path: 3 }]) expect(checkRecord(bad)).toBeUndefined();
  });

  it("patch reseals a verified record, keeps an unchecked one unchecked and never rewrites a damaged one; remove keeps damaged ones", async () => {
    home = await tempDir("svc-rec-");
    const records = new WorktreeRecords(home);
    await records.put(rec("good"));
    const legacy = rec("legacy");
    const doc = await raw();
    doc.trees.push(legacy as unknown as Record<string, unknown>, {
      ...sealRecord(rec("bad")),
      baseCommit: "b".repeat(40),
    });
    await writeFile(join(home, RECORDS_FILE), JSON.stringify(doc));

    for (const slug of ["good", "legacy", "bad"])
      await records.patch(`/trees/app/${slug}`, { provisioning: { state: "done" } });
    const view = await records.read();
    expect(view.records.map((r) => `${r.record.slug}:${r.integrity}:${r.record.provisioning?.state ?? "-"}`)).toEqual([
      "good:verified:done",
      "legacy:unchecked:done",
      "bad:damaged:-",
    ]);
    expect(view.warnings).toEqual([
      expect.stringContaining("the record of /trees/app/bad is damaged: its checksum does not match its fields"),
    ]);
    expect((await records.list()).map((r) => r.slug)).toEqual(["good", "legacy"]);
    expect(await records.find("/trees/app/bad")).toBeUndefined();

    await records.remove(["/trees/app/good", "/trees/app/legacy", "/trees/app/bad"]);
    expect((await raw()).trees.map((t) => t.slug)).toEqual(["bad"]);
  });

  it("a file that is not JSON is reported by readers and set aside, not lost, by the next writer", async () => {
    home = await tempDir("svc-rec-");
    const records = new WorktreeRecords(home);
    await records.put(rec("old"));
    const torn = (await readFile(join(home, RECORDS_FILE), "utf8")).slice(0, 40);
    await writeFile(join(home, RECORDS_FILE), torn);
    expect(await records.read()).toEqual({
      records: [],
      warnings: [expect.stringMatching(/worktrees\.json is damaged \(not valid JSON/)],
    });

    const { setAside } = await records.put(rec("new"));
    expect(setAside).toMatch(/worktrees\.json\.damaged-\d{4}-/);
    expect(await readFile(setAside!, "utf8")).toBe(torn);
    expect((await records.list()).map((r) => r.slug)).toEqual(["new"]);
    expect((await records.read()).warnings).toEqual([
      expect.stringContaining("is a damaged records file svc set aside"),
    ]);
    expect((await readdir(home)).filter((n) => n.startsWith(RECORDS_FILE)).length).toBe(2);
  });

  it("parallel writers lose no record", async () => {
    home = await tempDir("svc-rec-");
    await Promise.all(Array.from({ length: 12 }, (_, i) => new WorktreeRecords(home).put(rec(`t${i}`))));
    const view = await new WorktreeRecords(home).read();
    expect(view.records.filter((r) => r.integrity === "verified")).toHaveLength(12);
  });
});
