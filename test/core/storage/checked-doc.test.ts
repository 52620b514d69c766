import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { readCheckedDoc, writeCheckedDoc } from "../../../core/storage/checked-doc.js";
import { readVerdict, writeVerdict } from "../../../core/sessions/verdict-file.js";

const schema = z.object({ name: z.string(), n: z.number() });
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-checked-doc-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("checked documents", () => {
  it("round-trips, created 0600", async () => {
    const path = join(dir, "a.json");
    await writeCheckedDoc(path, 1, "thing", { name: "x", n: 2 });
    expect(await readCheckedDoc(path, 1, "thing", schema)).toEqual({ state: "ok", value: { name: "x", n: 2 } });
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("tells missing from each kind of damage, and leaves a damaged file as it is", async () => {
    const path = join(dir, "a.json");
    expect(await readCheckedDoc(path, 1, "thing", schema)).toEqual({ state: "missing" });
    await writeCheckedDoc(path, 1, "thing", { name: "x", n: 2 });
    const good = await readFile(path, "utf8");
    const cases: Array<[string, RegExp]> = [
      [good.slice(0, good.length - 6), /not JSON/],
      [good.replace('"version":1', '"version":2'), /version is 2/],
      [good.replace('"n":2', '"n":3'), /checksum/],
    ];
    for (const [text, why] of cases) {
      await writeFile(path, text);
      const read = await readCheckedDoc(path, 1, "thing", schema);
      expect(read).toMatchObject({ state: "damaged", path, reason: expect.stringMatching(why) });
      expect(await readFile(path, "utf8")).toBe(text);
    }
    await writeCheckedDoc(path, 1, "thing", { name: 5 });
    expect(await readCheckedDoc(path, 1, "thing", schema)).toMatchObject({
      state: "damaged",
      reason: expect.stringMatching(/^field name/),
    });
  });

  it("a session's verdict: written and read back; a damaged one is told and read as none", async () => {
    const v = { verdict: "stuck" as const, reason: "loops", trigger: "stalled", at: 1, model: "m" };
    await writeVerdict(dir, "ses_1", v);
    expect(await readVerdict(dir, "ses_1")).toEqual(v);
    const path = join(dir, "ses_1", "verdict.json");
    await writeFile(path, (await readFile(path, "utf8")).replace("loops", "spins"));
    const told: string[] = [];
    expect(await readVerdict(dir, "ses_1", (p, reason) => told.push(`${p}: ${reason}`))).toBeUndefined();
    expect(told).toEqual([`${path}: its checksum does not match its content`]);
  });
});
