import { appendFile, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEDUP_LIMIT, SentinelDedup } from "../../../core/sentinels/dedup.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-dedup-")));
afterEach(() => cleanup());

const dir = () => join(home, "sentinels-dedup");
async function reloaded(id: string): Promise<SentinelDedup> {
  const d = new SentinelDedup(home);
  await d.load(id);
  return d;
}

describe("sentinel dedup", () => {
  it("is bounded to the last 1000 ids per sentinel, compacts its journal into a snapshot, and survives a reload", async () => {
    const d = new SentinelDedup(home);
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
    const d = new SentinelDedup(home);
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
    const d = new SentinelDedup(home);
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
    const d = new SentinelDedup(home);
    await d.recordDelivery("snt_a", "e1", "now");
    await d.recordDelivery("snt_b", "e1", "now");
    expect(await d.orphans(new Set(["snt_a"]))).toEqual(["snt_b"]);
    await d.remove("snt_b");
    expect(await d.orphans(new Set(["snt_a"]))).toEqual([]);
    expect((await reloaded("snt_b")).delivered("snt_b")).toBe(0);
  });
});
