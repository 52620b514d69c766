import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JsonGroupCommit } from "../../../core/storage/json-group-commit.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-group-commit-")));
afterEach(() => cleanup());

type Doc = { items: number[] };
const add =
  (n: number) =>
  (cur: Doc | undefined): Doc => ({ items: [...(cur?.items ?? []), n] });

describe("JsonGroupCommit", () => {
  it("applies 100 concurrent changes in arrival order, in a handful of writes, each answered once durable", async () => {
    const path = join(home, "doc.json");
    const writes: Doc[] = [];
    const doc = new JsonGroupCommit<Doc>(path, { mode: 0o600 }, (v) => writes.push(v));
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => doc.update(add(i))));
    const onDisk = JSON.parse(await readFile(path, "utf8")) as Doc;
    expect(onDisk.items).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // The first change writes alone; everything that arrived meanwhile shares the next write.
    expect(writes.length).toBeLessThanOrEqual(3);
    for (const [i, a] of answers.entries()) expect(a!.items).toContain(i);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("refuses a throwing change alone; the rest of its group is written", async () => {
    const path = join(home, "doc.json");
    const doc = new JsonGroupCommit<Doc>(path);
    const results = await Promise.allSettled([
      doc.update(add(1)),
      doc.update(add(2)),
      doc.update(() => {
        throw new Error("no");
      }),
      doc.update(add(3)),
      doc.update(() => undefined),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual({ items: [1, 2, 3] });
  });

  it("fails every change of a group whose write fails, and the next group still writes", async () => {
    const blocker = join(home, "not-a-dir");
    await writeFile(blocker, "x");
    const bad = new JsonGroupCommit<Doc>(join(blocker, "doc.json"));
    const results = await Promise.allSettled([bad.update(add(1)), bad.update(add(2))]);
    expect(results.every((r) => r.status === "rejected")).toBe(true);
    await rm(blocker);
    await mkdir(blocker);
    await expect(bad.update(add(7))).resolves.toEqual({ items: [7] });
  });
});
