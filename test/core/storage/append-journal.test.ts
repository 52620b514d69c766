import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppendJournal } from "../../../core/storage/append-journal.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-append-journal-")));
afterEach(() => cleanup());

describe("append journal (group commit)", () => {
  it("creates the file (and its directory) with mode 0600 and appends lines in call order", async () => {
    const path = join(home, "sub", "j.log");
    const j = await AppendJournal.open(path);
    await j.append("a\n");
    await j.close();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const again = await AppendJournal.open(path, { exists: true });
    await Promise.all(["b\n", "c\n", "d\n"].map((t) => again.append(t)));
    await again.close();
    expect(await readFile(path, "utf8")).toBe("a\nb\nc\nd\n");
  });

  it("runs durable callbacks in append order, each before its appender resumes", async () => {
    const j = await AppendJournal.open(join(home, "j.log"));
    const applied: number[] = [];
    const seenAtResume: number[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        j.append(`${i}\n`, () => applied.push(i)).then(() => seenAtResume.push(applied.length > i ? 1 : 0)),
      ),
    );
    await j.close();
    expect(applied).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(seenAtResume.every((x) => x === 1)).toBe(true);
    expect((await readFile(join(home, "j.log"), "utf8")).split("\n").filter(Boolean)).toHaveLength(50);
  });

  it("runs exclusive work between two batches: appends queued meanwhile land after it", async () => {
    const path = join(home, "j.log");
    const j = await AppendJournal.open(path);
    const first = j.append("old\n");
    const emptied = j.exclusive(async () => {
      await j.truncate();
      return readFile(path, "utf8");
    });
    const later = j.append("new\n");
    await Promise.all([first, later]);
    expect(await emptied).toBe("");
    await j.close();
    expect(await readFile(path, "utf8")).toBe("new\n");
  });

  it("close writes what is queued and then refuses appends", async () => {
    const path = join(home, "j.log");
    const j = await AppendJournal.open(path);
    const queued = j.append("x\n");
    const closed = j.close();
    expect(j.isClosed).toBe(true);
    await expect(j.append("y\n")).rejects.toThrow(/closed/);
    await Promise.all([queued, closed]);
    expect(await readFile(path, "utf8")).toBe("x\n");
  });

  it("fails every append of a batch whose write fails, and applies none of them", async () => {
    const j = await AppendJournal.open(join(home, "j.log"));
    // Closing the handle underneath makes the next write fail like a disk error would.
    await (j as unknown as { handle: { close(): Promise<void> } }).handle.close();
    const applied: string[] = [];
    const results = await Promise.allSettled(["a\n", "b\n"].map((t) => j.append(t, () => applied.push(t))));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(applied).toEqual([]);
  });
});
