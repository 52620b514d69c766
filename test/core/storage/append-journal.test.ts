import { readFile, stat, writeFile, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AppendJournal } from "../../../core/storage/append-journal.js";
import { makeTempHome } from "../../support/cli.js";

/** The journal's open file handle (to make its writes fail like a disk error would). */
const handleOf = (j: AppendJournal): FileHandle => (j as unknown as { file: { handle: FileHandle } }).file.handle;

/** Makes each write of `j` put only its first 3 bytes on disk and then fail; returns the undo. */
function tearWrites(j: AppendJournal): () => void {
  const handle = handleOf(j);
  const write = handle.write.bind(handle);
  const torn = async (buf: Buffer) => {
    await write(buf.subarray(0, 3));
    throw new Error("EIO");
  };
  handle.write = torn as unknown as FileHandle["write"];
  return () => (handle.write = write as FileHandle["write"]);
}

/**
 * A journal at `path` holding "a\n", whose next write ("bbbbbb\n") put "bbb" on disk and failed;
 * the cut after it, and the next `cutFailures - 1` cuts, fail too.
 */
async function tornJournal(path: string, cutFailures: number): Promise<AppendJournal> {
  const j = await AppendJournal.open(path);
  await j.append("a\n");
  const restore = tearWrites(j);
  const handle = handleOf(j);
  const truncate = handle.truncate.bind(handle);
  handle.truncate = ((len?: number) =>
    cutFailures-- > 0 ? Promise.reject(new Error("EIO truncate")) : truncate(len)) as typeof handle.truncate;
  await expect(j.append("bbbbbb\n")).rejects.toThrow("EIO");
  restore();
  return j;
}

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

  it("exclusive work that throws synchronously rejects only its own call; appends go on", async () => {
    const path = join(home, "j.log");
    const j = await AppendJournal.open(path);
    const failing = j.exclusive((() => {
      throw new Error("sync boom");
    }) as () => Promise<void>);
    await expect(failing).rejects.toThrow("sync boom");
    await j.append("after\n");
    await j.close();
    expect(await readFile(path, "utf8")).toBe("after\n");
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

  it("a lazy append starts no write: it rides with the next append's write, in order, durable when it resolves", async () => {
    const path = join(home, "j.log");
    // A lazy wait far longer than the test: only another append (or a drain) writes the lazy line.
    const j = await AppendJournal.open(path, { lazyMs: 600_000 });
    const handle = handleOf(j);
    const write = handle.write.bind(handle);
    const writes: string[] = [];
    handle.write = (async (buf: Buffer, offset?: number) => {
      writes.push(buf.subarray(offset ?? 0).toString("utf8"));
      return write(buf, offset);
    }) as unknown as FileHandle["write"];
    let lazyDurable = false;
    const lazy = j.append("lazy\n", () => (lazyDurable = true), { lazy: true });
    expect(j.busy).toBe(true);
    await j.append("urgent\n");
    expect(lazyDurable).toBe(true);
    await lazy;
    expect(writes).toEqual(["lazy\nurgent\n"]);
    // Alone, a lazy append is written by a drain (and by close).
    const alone = j.append(Buffer.from("bytes\n"), undefined, { lazy: true });
    await j.drained();
    await alone;
    expect(writes).toHaveLength(2);
    await j.close();
    expect(await readFile(path, "utf8")).toBe("lazy\nurgent\nbytes\n");
    // With nothing else to ride with, it is written on its own once lazyMs passed.
    const soon = await AppendJournal.open(join(home, "k.log"), { lazyMs: 1 });
    await soon.append("late\n", undefined, { lazy: true });
    expect(await readFile(join(home, "k.log"), "utf8")).toBe("late\n");
    await soon.close();
  });

  it("fails every append of a batch whose write fails, and applies none of them", async () => {
    const j = await AppendJournal.open(join(home, "j.log"));
    // Closing the handle underneath makes the next write fail like a disk error would.
    await handleOf(j).close();
    const applied: string[] = [];
    const results = await Promise.allSettled(["a\n", "b\n"].map((t) => j.append(t, () => applied.push(t))));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(applied).toEqual([]);
  });

  it("cuts a torn partial write off, so the next line starts at a line boundary", async () => {
    const path = join(home, "j.log");
    const j = await AppendJournal.open(path);
    await j.append("a\n");
    // The disk takes part of the batch, then fails.
    const restore = tearWrites(j);
    await expect(j.append("bbbbbb\n")).rejects.toThrow("EIO");
    restore();
    await j.append("c\n");
    await j.close();
    expect(await readFile(path, "utf8")).toBe("a\nc\n");
  });

  it("retries a failed cut before the next write, and fails that write rather than continue a torn line", async () => {
    const path = join(home, "j.log");
    // The cut after the failed write fails, and so do both tries around the next write.
    const j = await tornJournal(path, 3);
    // Both tries to cut, before this write and after its failure, fail: nothing lands after the torn bytes.
    await expect(j.append("c\n")).rejects.toThrow("EIO truncate");
    expect(await readFile(path, "utf8")).toBe("a\nbbb");
    await j.append("d\n");
    await j.close();
    expect(await readFile(path, "utf8")).toBe("a\nd\n");
  });

  it("a failed write whose cut failed is cut before a rotation and at close, not carried into the retired file or left behind", async () => {
    for (const end of ["rotate", "close"] as const) {
      const path = join(home, `${end}.log`);
      // Only the cut right after the failed write fails: the torn "bbb" stays on disk for now.
      const j = await tornJournal(path, 1);
      expect(await readFile(path, "utf8")).toBe("a\nbbb");
      if (end === "rotate") {
        await j.exclusive(() => j.rotate(join(home, "rotate.log.1")));
        expect(await readFile(join(home, "rotate.log.1"), "utf8")).toBe("a\n");
        await j.append("c\n");
        await j.close();
        expect(await readFile(path, "utf8")).toBe("c\n");
      } else {
        await j.close();
        expect(await readFile(path, "utf8")).toBe("a\n");
      }
    }
  });

  it("a render or durable callback that throws fails its own append only; the others are written and applied", async () => {
    const path = join(home, "j.log");
    const j = await AppendJournal.open(path);
    const applied: string[] = [];
    const fails = (message: string) => () => {
      throw new Error(message);
    };
    const results = await Promise.allSettled([
      j.append("a\n", () => applied.push("a")),
      j.append(fails("render failed")),
      j.append("b\n", fails("apply failed")),
      j.append("c\n", () => applied.push("c")),
    ]);
    expect(results.map((r) => (r.status === "rejected" ? (r.reason as Error).message : r.status))).toEqual([
      "fulfilled",
      "render failed",
      "apply failed",
      "fulfilled",
    ]);
    expect(applied).toEqual(["a", "c"]);
    // A batch of nothing but failed renders writes nothing; the journal goes on.
    await expect(j.append(fails("alone"))).rejects.toThrow("alone");
    await j.append("d\n");
    await j.close();
    // "b" is durable: only applying it failed.
    expect(await readFile(path, "utf8")).toBe("a\nb\nc\nd\n");
  });

  it("at open, cuts bytes after the last newline off when asked (cutTornTail), and creates a missing file", async () => {
    const path = join(home, "j.log");
    await writeFile(path, "a\nb\npart");
    const j = await AppendJournal.open(path, { cutTornTail: true });
    await j.append("c\n");
    await j.close();
    expect(await readFile(path, "utf8")).toBe("a\nb\nc\n");
    await writeFile(path, "x".repeat(200_000));
    const whole = await AppendJournal.open(path, { cutTornTail: true });
    await whole.append("d\n");
    await whole.close();
    expect(await readFile(path, "utf8")).toBe("d\n");
    const fresh = join(home, "sub", "new.log");
    const created = await AppendJournal.open(fresh, { cutTornTail: true });
    await created.append("e\n");
    await created.close();
    expect(await readFile(fresh, "utf8")).toBe("e\n");
    expect((await stat(fresh)).mode & 0o777).toBe(0o600);
  });

  it("caps a batch at maxBatchChars (at least one append), rendering lazy text only when its batch is formed", async () => {
    let batch = 0;
    const events: string[] = [];
    const j = await AppendJournal.open(join(home, "j.log"), { maxBatchChars: 10, afterBatch: () => void batch++ });
    const appends = ["11111\n", "22222\n", "33333\n", "4".repeat(20) + "\n", "55555\n"].map((t, i) =>
      j.append(
        () => (events.push(`render ${i}`), t),
        () => (events.push(`durable ${i} in batch ${batch}`), i * 10),
      ),
    );
    expect(await Promise.all(appends)).toEqual([0, 10, 20, 30, 40]);
    await j.close();
    expect(events).toEqual([
      "render 0",
      "durable 0 in batch 0",
      "render 1",
      "render 2",
      "durable 1 in batch 1",
      "durable 2 in batch 1",
      "render 3",
      "durable 3 in batch 2",
      "render 4",
      "durable 4 in batch 3",
    ]);
  });

  it("runs afterBatch after each durable batch, before appenders resume, and ignores its errors", async () => {
    const seen: string[] = [];
    const j = await AppendJournal.open(join(home, "j.log"), {
      afterBatch: () => {
        seen.push("after");
        throw new Error("hook failed");
      },
    });
    await Promise.all([j.append("a\n", () => seen.push("durable a")).then(() => seen.push("resumed a"))]);
    await j.append("b\n").then(() => seen.push("resumed b"));
    await j.close();
    expect(seen).toEqual(["durable a", "after", "resumed a", "after", "resumed b"]);
    expect(await readFile(join(home, "j.log"), "utf8")).toBe("a\nb\n");
  });

  it("rotates to a fresh file, keeping the old one at the retired path; a failed rotation keeps the current file", async () => {
    const path = join(home, "j.log");
    const j = await AppendJournal.open(path);
    await j.append("old\n");
    await j.exclusive(() => j.rotate(join(home, "j.log.1")));
    await j.append("new\n");
    await expect(j.exclusive(() => j.rotate(join(home, "missing", "j.log.2")))).rejects.toThrow();
    await j.append("more\n");
    await j.drained();
    expect(await readFile(join(home, "j.log.1"), "utf8")).toBe("old\n");
    expect(await readFile(path, "utf8")).toBe("new\nmore\n");
    await j.close();
  });

  it("drained resolves once what is queued is written", async () => {
    const path = join(home, "j.log");
    const j = await AppendJournal.open(path);
    void j.append("a\n");
    void j.append("b\n");
    await j.drained();
    expect(await readFile(path, "utf8")).toBe("a\nb\n");
    await j.close();
  });
});
