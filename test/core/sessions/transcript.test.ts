import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { TranscriptWriter } from "../../../core/sessions/transcript.js";

describe("TranscriptWriter", () => {
  let dir: string | undefined;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it("writes lines in order and announces each to followers", async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-transcript-"));
    const w = new TranscriptWriter(join(dir, "s", "events.jsonl"), () => 5);
    const seen: number[] = [];
    w.follow((l) => seen.push(l.seq));
    w.append("a");
    w.append("b", { x: 1 });
    await w.close();
    const lines = (await readFile(join(dir, "s", "events.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toEqual([
      { seq: 1, at: 5, type: "a" },
      { seq: 2, at: 5, type: "b", data: { x: 1 } },
    ]);
    expect(seen).toEqual([1, 2]);
  });

  it("closes quietly when its file could never be opened (its folder was removed under it)", async () => {
    dir = await mkdtemp(join(tmpdir(), "svc-transcript-"));
    // A regular file where the parent folder should be: mkdir and open both fail.
    const blocker = join(dir, "blocker");
    await writeFile(blocker, "");
    const w = new TranscriptWriter(join(blocker, "events.jsonl"), () => 0);
    w.append("a");
    await expect(w.close()).resolves.toBeUndefined();
  });
});
