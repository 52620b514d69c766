import fc from "fast-check";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linesBackwards } from "../../../core/storage/read-backwards.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-read-backwards-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function collect(path: string, chunkBytes?: number): Promise<Array<{ start: number; text: string }>> {
  const out: Array<{ start: number; text: string }> = [];
  for await (const l of linesBackwards(path, chunkBytes)) out.push({ start: l.start, text: l.bytes.toString("utf8") });
  return out;
}

describe("linesBackwards", () => {
  it("yields what follows the last newline first, then each line without its newline, with its offset", async () => {
    const path = join(dir, "a.txt");
    await writeFile(path, "ab\nc\n\ntorn");
    expect(await collect(path, 2)).toEqual([
      { start: 6, text: "torn" },
      { start: 5, text: "" },
      { start: 3, text: "c" },
      { start: 0, text: "ab" },
    ]);
    await writeFile(path, "ab\n");
    expect(await collect(path)).toEqual([
      { start: 3, text: "" },
      { start: 0, text: "ab" },
    ]);
    await writeFile(path, "");
    expect(await collect(path)).toEqual([{ start: 0, text: "" }]);
    expect(await collect(join(dir, "missing.txt"))).toEqual([]);
  });

  it("splits as a forward read does, whatever the chunk size, across multi-byte characters", async () => {
    const text = fc
      .array(fc.oneof(fc.constantFrom("\n", "é", "€", "😀", "x"), fc.string({ maxLength: 5 })), { maxLength: 60 })
      .map((parts) => parts.join(""));
    let k = 0;
    await fc.assert(
      fc.asyncProperty(text, fc.integer({ min: 1, max: 40 }), async (content, chunk) => {
        const path = join(dir, `prop-${k++}.txt`);
        await writeFile(path, content);
        const forward = content.split("\n");
        const bytes = Buffer.from(content);
        const starts = forward.map((_, i) =>
          Buffer.byteLength(
            forward
              .slice(0, i)
              .map((l) => l + "\n")
              .join(""),
          ),
        );
        expect(await collect(path, chunk)).toEqual(forward.map((l, i) => ({ start: starts[i], text: l })).reverse());
        expect(starts.at(-1)! + Buffer.byteLength(forward.at(-1)!)).toBe(bytes.length);
        await rm(path);
      }),
      { numRuns: 200 },
    );
  });

  it.runIf(existsSync("/proc/self/fd"))(
    "reads only as far back as the caller goes, and closes the file when it stops early",
    async () => {
      const path = join(dir, "long.txt");
      await writeFile(path, "x".repeat(1 << 20) + "\nlast\n");
      const fds = (await readdir("/proc/self/fd")).length;
      for await (const l of linesBackwards(path, 16)) {
        if (l.bytes.length > 0) {
          expect(l.bytes.toString()).toBe("last");
          break;
        }
      }
      expect((await readdir("/proc/self/fd")).length).toBe(fds);
    },
  );
});
