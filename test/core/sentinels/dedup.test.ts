import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEDUP_LIMIT, SentinelDedup } from "../../../core/sentinels/dedup.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-dedup-")));
afterEach(() => cleanup());

describe("sentinel dedup", () => {
  it("is bounded to the last 1000 ids per sentinel and persists them", async () => {
    const d = new SentinelDedup(home);
    await d.load("snt_a");
    for (let i = 0; i < DEDUP_LIMIT + 5; i++) await d.recordDelivery("snt_a", `e${i}`, "now");
    expect(d.has("snt_a", "e4")).toBe(false);
    expect(d.has("snt_a", "e5")).toBe(true);
    const file = JSON.parse(await readFile(join(home, "sentinels-dedup", "snt_a.json"), "utf8"));
    expect(file.seen).toHaveLength(DEDUP_LIMIT);
    expect(file.delivered).toBe(DEDUP_LIMIT + 5);
    const again = new SentinelDedup(home);
    await again.load("snt_a");
    expect(again.has("snt_a", `e${DEDUP_LIMIT + 4}`)).toBe(true);
    expect(again.has("snt_a", "e4")).toBe(false);
    expect(again.delivered("snt_a")).toBe(DEDUP_LIMIT + 5);
  });

  it("keeps ids per sentinel and in-flight ids until marked seen", async () => {
    const d = new SentinelDedup(home);
    await d.recordDelivery("snt_a", "e1", "deferred");
    expect(d.has("snt_a", "e1")).toBe(true);
    await d.load("snt_b");
    expect(d.has("snt_b", "e1")).toBe(false);
    expect(d.inflight("snt_a")).toEqual(["e1"]);
    await d.markSeen("snt_a", "e1");
    expect(d.inflight("snt_a")).toEqual([]);
    expect(d.has("snt_a", "e1")).toBe(true);
  });

  it("finds orphan files and removes a sentinel's state", async () => {
    const d = new SentinelDedup(home);
    await d.recordDelivery("snt_a", "e1", "now");
    await d.recordDelivery("snt_b", "e1", "now");
    expect(await d.orphans(new Set(["snt_a"]))).toEqual(["snt_b"]);
    await d.remove("snt_b");
    expect(await d.orphans(new Set(["snt_a"]))).toEqual([]);
  });
});
