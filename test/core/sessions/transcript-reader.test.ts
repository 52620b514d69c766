import fc from "fast-check";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTranscript, readTranscriptTail } from "../../../core/sessions/transcript-reader.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-transcript-reader-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const line = (seq: number, text: string) =>
  JSON.stringify({ seq, at: 1_700_000_000_000 + seq, type: "update", data: { text } }) + "\n";

describe("readTranscriptTail", () => {
  it("returns the last lines, as the whole-file reader does", async () => {
    const path = join(dir, "short.jsonl");
    await writeFile(path, [1, 2, 3, 4, 5].map((n) => line(n, `t${n}`)).join(""));
    expect((await readTranscriptTail(path, 2)).map((l) => l.seq)).toEqual([4, 5]);
    expect((await readTranscriptTail(path, 50)).map((l) => l.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(await readTranscriptTail(path, 0)).toEqual([]);
  });

  it("has no lines for a missing or empty file", async () => {
    expect(await readTranscriptTail(join(dir, "missing.jsonl"), 5)).toEqual([]);
    await writeFile(join(dir, "empty.jsonl"), "");
    expect(await readTranscriptTail(join(dir, "empty.jsonl"), 5)).toEqual([]);
  });

  it("skips a torn last line and unparsable lines, and still returns the count asked for", async () => {
    const path = join(dir, "torn.jsonl");
    await writeFile(path, line(1, "a") + line(2, "b") + "{not json}\n" + line(3, "c") + '{"seq":4,"at":1,"ty');
    expect((await readTranscriptTail(path, 2)).map((l) => l.seq)).toEqual([2, 3]);
  });

  it("agrees with the whole-file reader across 64 KiB read boundaries, long lines and multi-byte text", async () => {
    // Lines from a few bytes to over 64 KiB, with 2-, 3- and 4-byte characters, so that chunk
    // boundaries fall inside lines and inside characters; sometimes a torn tail or a broken line.
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom("é", "€", "😀", "x").chain((ch) => fc.integer({ min: 1, max: 40_000 }).map((n) => ch.repeat(n))),
    );
    let k = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(text, fc.boolean()), { minLength: 0, maxLength: 30 }),
        fc.option(fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !s.includes("\n"))),
        fc.integer({ min: 1, max: 40 }),
        async (entries, tornTail, count) => {
          const body =
            entries
              .map(([t, broken], i) => (broken && i % 5 === 0 ? `{"seq":${i + 1},"broken\n` : line(i + 1, t)))
              .join("") + (tornTail ?? "");
          const path = join(dir, `prop-${k++}.jsonl`);
          await writeFile(path, body);
          expect(await readTranscriptTail(path, count)).toEqual((await readTranscript(path)).slice(-count));
          await rm(path);
        },
      ),
      { numRuns: 60 },
    );
  });
});
