import { appendFile, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEDUP_LIMIT, MAX_OPEN_JOURNALS, SentinelDedup } from "../../../core/sentinels/dedup.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
const opened: SentinelDedup[] = [];
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-dedup-")));
afterEach(async () => {
  await Promise.all(opened.splice(0).map((d) => d.close()));
  await cleanup();
});

/** A dedup instance on the test's home, closed after the test. */
function dedup(): SentinelDedup {
  const d = new SentinelDedup(home);
  opened.push(d);
  return d;
}

const dir = () => join(home, "sentinels-dedup");
async function reloaded(id: string): Promise<SentinelDedup> {
  const d = dedup();
  await d.load(id);
  return d;
}

describe("sentinel dedup", () => {
  it("is bounded to the last 1000 ids per sentinel, compacts its journal into a snapshot, and survives a reload", async () => {
    const d = dedup();
    const total = 2 * DEDUP_LIMIT + 5;
    for (let i = 0; i < total; i++) await d.recordDelivery("snt_a", `e${i}`, "now");
    expect(d.has("snt_a", `e${total - DEDUP_LIMIT - 1}`)).toBe(false);
    expect(d.has("snt_a", `e${total - DEDUP_LIMIT}`)).toBe(true);
    const snapshot = JSON.parse(await readFile(join(dir(), "snt_a.json"), "utf8"));
    expect(snapshot).toMatchObject({ seq: 2 * DEDUP_LIMIT, delivered: 2 * DEDUP_LIMIT });
    expect(snapshot.seen).toHaveLength(DEDUP_LIMIT);
    expect((await readFile(join(dir(), "snt_a.log"), "utf8")).split("\n").filter(Boolean)).toHaveLength(5);
    const again = await reloaded("snt_a");
    expect(again.has("snt_a", `e${total - 1}`)).toBe(true);
    expect(again.has("snt_a", `e${total - DEDUP_LIMIT - 1}`)).toBe(false);
    expect(again.delivered("snt_a")).toBe(total);
  });

  it("keeps ids per sentinel and in-flight ids until marked seen, across reloads", async () => {
    const d = dedup();
    await d.recordDelivery("snt_a", "e1", "deferred");
    expect(d.has("snt_a", "e1")).toBe(true);
    await d.load("snt_b");
    expect(d.has("snt_b", "e1")).toBe(false);
    expect((await reloaded("snt_a")).inflight("snt_a")).toEqual(["e1"]);
    await d.markSeen("snt_a", "e1");
    const r = await reloaded("snt_a");
    expect([r.inflight("snt_a"), r.has("snt_a", "e1"), r.delivered("snt_a")]).toEqual([[], true, 1]);
  });

  it("drops a torn last journal line (kill -9 mid-append) and replays nothing twice after a crash mid-compaction", async () => {
    const d = dedup();
    await d.recordDelivery("snt_a", "e1", "now");
    await d.recordDelivery("snt_a", "e2", "now");
    await appendFile(join(dir(), "snt_a.log"), '{"q":3,"e":"e3","a":"no');
    const torn = await reloaded("snt_a");
    expect([torn.has("snt_a", "e2"), torn.has("snt_a", "e3"), torn.delivered("snt_a")]).toEqual([true, false, 2]);
    // A snapshot written (seq 2) but the journal not yet emptied: the journal's lines are not counted again.
    await writeFile(join(dir(), "snt_a.json"), JSON.stringify({ seq: 2, seen: ["e1", "e2"], inflight: [], delivered: 2 }));
    const replayed = await reloaded("snt_a");
    expect(replayed.delivered("snt_a")).toBe(2);
    await replayed.recordDelivery("snt_a", "e3", "now");
    expect((await reloaded("snt_a")).delivered("snt_a")).toBe(3);
  });

  it("finds orphan files and removes a sentinel's state", async () => {
    const d = dedup();
    await d.recordDelivery("snt_a", "e1", "now");
    await d.recordDelivery("snt_b", "e1", "now");
    expect(await d.orphans(new Set(["snt_a"]))).toEqual(["snt_b"]);
    await d.remove("snt_b");
    expect(await d.orphans(new Set(["snt_a"]))).toEqual([]);
    expect((await reloaded("snt_b")).delivered("snt_b")).toBe(0);
  });

  it("commits concurrent changes of one sentinel in call order, one line each, and replays them alike", async () => {
    const d = dedup();
    await Promise.all([
      ...Array.from({ length: 30 }, (_, i) => d.recordDelivery("snt_a", `e${i}`, i % 2 ? "deferred" : "now")),
      ...Array.from({ length: 15 }, (_, i) => d.markSeen("snt_a", `e${2 * i + 1}`)),
    ]);
    const lines = (await readFile(join(dir(), "snt_a.log"), "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(lines.map((l) => l.q)).toEqual(Array.from({ length: 45 }, (_, i) => i + 1));
    expect([d.inflight("snt_a"), d.delivered("snt_a")]).toEqual([[], 30]);
    await d.close();
    const r = await reloaded("snt_a");
    expect([r.inflight("snt_a"), r.delivered("snt_a"), r.has("snt_a", "e29")]).toEqual([[], 30, true]);
    await r.close();
  });

  it(`keeps at most ${MAX_OPEN_JOURNALS} journals open, reopening a closed one without losing or reordering anything`, async () => {
    const fds = async () => (await readdir("/proc/self/fd")).length;
    const before = await fds();
    const d = dedup();
    const ids = Array.from({ length: MAX_OPEN_JOURNALS + 20 }, (_, i) => `snt_${i}`);
    for (const round of [0, 1, 2]) await Promise.all(ids.map((id) => d.recordDelivery(id, `e${round}`, "now")));
    expect(await fds()).toBeLessThanOrEqual(before + MAX_OPEN_JOURNALS);
    await d.close();
    for (const id of ids) {
      const r = await reloaded(id);
      expect([r.delivered(id), r.has(id, "e0"), r.has(id, "e2")]).toEqual([3, true, true]);
      const lines = (await readFile(join(dir(), `${id}.log`), "utf8")).split("\n").filter(Boolean).map((l) => JSON.parse(l).q);
      expect(lines).toEqual([1, 2, 3]);
      await r.close();
    }
  });
});
