import { appendFile, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { DEDUP_LIMIT, MAX_OPEN_JOURNALS, SentinelDedup, type DedupLoadReport } from "../../../core/sentinels/dedup.js";
import { AppendJournal } from "../../../core/storage/append-journal.js";
import { readCheckedLines } from "../../../core/storage/checked-lines.js";
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

/** The records of a journal, each line's checksum verified. */
const journalRecords = (text: string): Array<Record<string, any>> => {
  const lines = readCheckedLines(text);
  expect(lines.damaged).toEqual([]);
  return lines.records.map((r) => JSON.parse(r.text));
};

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
    // The checkpoint line (the count at the snapshot), then the 5 changes since.
    const log = journalRecords(await readFile(join(dir(), "snt_a.log"), "utf8"));
    expect(log).toHaveLength(6);
    expect(log[0]).toEqual({ q: 2 * DEDUP_LIMIT, c: 2 * DEDUP_LIMIT });
    expect(log.at(-1)).toMatchObject({ q: total, a: "now", d: total });
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
    await writeFile(
      join(dir(), "snt_a.json"),
      JSON.stringify({ seq: 2, seen: ["e1", "e2"], inflight: [], delivered: 2 }),
    );
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
    const lines = journalRecords(await readFile(join(dir(), "snt_a.log"), "utf8"));
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
    // While more than the bound are in use at once all stay open (closing one in use made changes
    // reopen it and close another, over and over); idle ones are closed as each change completes.
    // Each open journal holds two descriptors: the journal and its length record.
    await vi.waitFor(async () => expect(await fds()).toBeLessThanOrEqual(before + 2 * MAX_OPEN_JOURNALS), {
      timeout: 60_000,
    });
    await d.close();
    for (const id of ids) {
      const r = await reloaded(id);
      expect([r.delivered(id), r.has(id, "e0"), r.has(id, "e2")]).toEqual([3, true, true]);
      const lines = journalRecords(await readFile(join(dir(), `${id}.log`), "utf8")).map((l) => l.q);
      expect(lines).toEqual([1, 2, 3]);
      await r.close();
    }
  });
});

it("many more sentinels changing at once than journals kept open: each journal opens once, none is closed while in use", async () => {
  const d = dedup();
  const open = AppendJournal.open;
  let opens = 0;
  AppendJournal.open = (...args: Parameters<typeof open>) => (opens++, open(...args));
  try {
    const ids = Array.from({ length: 5 * MAX_OPEN_JOURNALS }, (_, i) => `snt_${i}`);
    await Promise.all(
      ids.flatMap((id) => [
        d.recordDelivery(id, "a", "deferred"),
        d.recordDelivery(id, "b", "now"),
        d.markSeen(id, "a"),
      ]),
    );
    expect(ids.every((id) => d.delivered(id) === 2 && d.has(id, "a") && d.has(id, "b"))).toBe(true);
    // Closing a journal a change was about to use made it reopen, closing another in use: the
    // open/close churn that stalled a daemon with many sentinels.
    expect(opens).toBe(ids.length);
  } finally {
    AppendJournal.open = open;
  }
});

/**
 * The engine's own record (session targets): 30 deliveries with a compaction after 20 changes, so
 * the home holds a snapshot (20 changes) and a journal (its checkpoint line, then 10 changes).
 */
describe("sentinel dedup damage is found, kept and told; the count survives", () => {
  const limits = { seen: 1000, compactAfter: 20 };
  const reports: DedupLoadReport[] = [];
  const fresh = () => {
    const d = new SentinelDedup(home, limits);
    d.onDamage = (r) => reports.push(r);
    opened.push(d);
    return d;
  };
  beforeEach(async () => {
    reports.length = 0;
    const d = fresh();
    for (let i = 0; i < 30; i++) await d.recordDelivery("snt_s", `e${i}`, "now");
    await d.close();
  });
  const file = (ext: string) => join(dir(), `snt_s.${ext}`);
  /** The recovered state was written back: the next start finds nothing to tell, copies nothing, and keeps what was recovered. */
  const startsAgainQuietly = async (d: SentinelDedup, delivered: number, kept: string, lost: string) => {
    await d.close();
    const copies = (await readdir(dir())).filter((f) => f.includes(".damaged-")).length;
    reports.length = 0;
    const again = fresh();
    await again.load("snt_s");
    expect([reports, again.delivered("snt_s"), again.has("snt_s", kept), again.has("snt_s", lost)]).toEqual([
      [],
      delivered,
      true,
      false,
    ]);
    expect((await readdir(dir())).filter((f) => f.includes(".damaged-")).length).toBe(copies);
    await again.recordDelivery("snt_s", "e99", "now");
    expect(again.delivered("snt_s")).toBe(delivered + 1);
  };

  it("undamaged: nothing told, everything kept", async () => {
    const d = fresh();
    await d.load("snt_s");
    expect([d.delivered("snt_s"), d.has("snt_s", "e0"), d.has("snt_s", "e29"), reports]).toEqual([30, true, true, []]);
  });

  it.each([
    ["deleted", () => rm(file("json")), "missing"],
    ["truncated", async () => truncate(file("json"), 40), "damaged"],
    [
      "a count edited",
      async () =>
        writeFile(file("json"), (await readFile(file("json"), "utf8")).replace('"delivered": 20', '"delivered": 2')),
      "damaged",
    ],
  ])(
    "the snapshot %s: told, kept aside, the count carried on by the journal; the ids it held are accepted again",
    async (_name, damage, state) => {
      await damage();
      const d = fresh();
      await d.load("snt_s");
      expect(reports).toEqual([
        expect.objectContaining({
          sentinelId: "snt_s",
          snapshot: expect.objectContaining({ state }),
          delivered: 30,
          known: 10,
        }),
      ]);
      expect(d.delivered("snt_s")).toBe(30);
      expect(d.has("snt_s", "e0")).toBe(false);
      expect(d.has("snt_s", "e29")).toBe(true);
      if (state === "damaged")
        expect((await readdir(dir())).some((f) => f.startsWith("snt_s.json.damaged-"))).toBe(true);
      await startsAgainQuietly(d, 30, "e29", "e0");
    },
  );

  it("one journal line damaged: told with its line, the file kept; the count holds, that id is accepted again", async () => {
    const lines = (await readFile(file("log"), "utf8")).split("\n");
    lines[3] = lines[3]!.replace('"a":"now"', '"a":"nov"');
    await writeFile(file("log"), lines.join("\n"));
    const d = fresh();
    await d.load("snt_s");
    expect(reports).toEqual([
      expect.objectContaining({ damagedLines: expect.objectContaining({ lines: [4] }), delivered: 30 }),
    ]);
    expect((await readdir(dir())).some((f) => f.startsWith("snt_s.log.damaged-"))).toBe(true);
    expect(d.delivered("snt_s")).toBe(30);
    expect(d.has("snt_s", "e22")).toBe(false);
    expect(d.has("snt_s", "e23")).toBe(true);
    await startsAgainQuietly(d, 30, "e23", "e22");
  });

  it("the last 4 journal lines cut (issue 42): told missing with their count and q numbers, kept in .missing until deleted", async () => {
    const lines = (await readFile(file("log"), "utf8")).split("\n").filter(Boolean);
    await writeFile(file("log"), `${lines.slice(0, -4).join("\n")}\n`);
    const d = fresh();
    await d.load("snt_s");
    expect(reports).toEqual([
      expect.objectContaining({
        missing: expect.objectContaining({ records: 4, seqs: "27-30", kept: `${file("log")}.missing` }),
      }),
    ]);
    // The four changes are gone: their ids are accepted again, the count is the last one kept.
    expect([d.delivered("snt_s"), d.has("snt_s", "e25"), d.has("snt_s", "e26")]).toEqual([26, true, false]);
    await d.recordDelivery("snt_s", "e26", "now");
    await d.close();
    reports.length = 0;
    const again = fresh();
    await again.load("snt_s");
    expect(reports).toEqual([]);
    expect((await readdir(dir())).filter((f) => f.endsWith(".missing"))).toEqual(["snt_s.log.missing"]);
  });

  it("a torn last line is cut off and told; the next change is whole", async () => {
    const torn = '1234abcd {"q":31,"e":"e3';
    await appendFile(file("log"), torn);
    const d = fresh();
    await d.load("snt_s");
    expect(reports).toEqual([expect.objectContaining({ tornBytes: torn.length })]);
    await d.recordDelivery("snt_s", "e30", "now");
    await d.close();
    const again = fresh();
    await again.load("snt_s");
    expect([again.delivered("snt_s"), again.has("snt_s", "e30")]).toEqual([31, true]);
    expect(reports).toHaveLength(1);
  });
});
