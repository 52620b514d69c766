import { readFile, readdir, rm, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock, createRandom } from "../../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import { OUTBOX_FILES } from "../../../../plugins/webhook-target/outbox/persistence.js";
import { makeTempHome } from "../../../support/cli.js";

const body = (id: string, sentinelId: string) =>
  Buffer.from(JSON.stringify({ id, type: "t.o.a", subjects: ["s"], time: "t", sentinelId, data: "x".repeat(200) }));

/**
 * Each damage case from issue 23, done to a home holding 20 compacted rows (in the snapshot and a
 * segment) and 20 rows since (inline in the journal): what was lost is told in the log with its
 * counts, a damaged file is kept, and an event whose record was lost is accepted again (never
 * answered as a duplicate that no row will deliver).
 */
describe("outbox damage is found, kept and told", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let clock: FakeClock;
  const opened: Outbox[] = [];
  const open = async () => {
    const random = createRandom(clock);
    const logger = createMemoryLogger();
    const ob = await Outbox.open({ home, now: () => clock.now(), newId: () => `req_${random.ulid()}`, logger });
    opened.push(ob);
    return { ob, logs: logger.lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
  };
  const journal = () => join(home, OUTBOX_FILES.journal);
  const snapshot = () => join(home, OUTBOX_FILES.snapshot);
  const ids = Array.from({ length: 40 }, (_, i) => `e${i}`);
  const sentinelOf = (i: number) => (i % 2 === 0 ? "snt_a" : "snt_b");

  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-outbox-damage-"));
    clock = new FakeClock(Date.UTC(2026, 0, 1));
    const { ob } = await open();
    for (let i = 0; i < 20; i++)
      await ob.add({ sentinelId: sentinelOf(i), eventId: ids[i]!, body: body(ids[i]!, sentinelOf(i)) });
    await ob.compact();
    for (let i = 20; i < 40; i++)
      await ob.add({ sentinelId: sentinelOf(i), eventId: ids[i]!, body: body(ids[i]!, sentinelOf(i)) });
    // A crash: nothing more is written (no close, no compaction).
    opened.splice(0);
  });
  afterEach(async () => {
    for (const ob of opened.splice(0)) await ob.close().catch(() => undefined);
    await cleanup();
  });

  const loaded = (logs: Array<Record<string, unknown>>) => logs.find((l) => l.msg === "webhook outbox loaded")!;
  const missing = (ob: Outbox) => ids.filter((id, i) => !ob.hasEvent(sentinelOf(i), id));

  it("an undamaged home after a crash loads everything and says so at info", async () => {
    const { ob, logs } = await open();
    expect(missing(ob)).toEqual([]);
    expect(loaded(logs)).toMatchObject({
      level: "info",
      rows: 40,
      pending: 40,
      recordsUnrecoverable: 0,
      tornLinesDropped: 0,
      rowsRebuiltFromBodies: 0,
    });
    expect(ob.accepted("snt_a") + ob.accepted("snt_b")).toBe(40);
  });

  it("the snapshot deleted: its rows are rebuilt from the stored bodies, told as missing", async () => {
    await rm(snapshot());
    const { ob, logs } = await open();
    expect(missing(ob)).toEqual([]);
    expect(ob.pending()).toHaveLength(40);
    expect(logs.find((l) => String(l.msg).startsWith("outbox snapshot is missing"))).toMatchObject({
      level: "error",
      rows: 20,
    });
    expect(loaded(logs)).toMatchObject({ level: "error", rows: 40, rowsRebuiltFromBodies: 20 });
  });

  it("the snapshot deleted: bodies that do not name their sentinel (MCP EventOccurrences) are rebuilt from their segment frames", async () => {
    const { ob } = await open();
    const occurrence = (id: string) =>
      Buffer.from(
        JSON.stringify({
          eventId: id,
          name: "ci.build",
          timestamp: "t",
          data: { type: "t.o.a", subjects: ["s"], payload: null },
          cursor: null,
        }),
      );
    for (const id of ["m1", "m2"]) await ob.add({ sentinelId: "snt_mcp", eventId: id, body: occurrence(id) });
    await ob.compact();
    opened.splice(0);
    await rm(snapshot());
    const { ob: again } = await open();
    expect(again.rowsOf("snt_mcp").map((r) => [r.eventId, r.status])).toEqual([
      ["m1", "pending"],
      ["m2", "pending"],
    ]);
    expect((await again.readBody(again.rowsOf("snt_mcp")[0]!)).equals(occurrence("m1"))).toBe(true);
  });

  it.each([
    ["truncated", (t: string) => t.slice(0, Math.floor(t.length / 2))],
    ["a status edited", (t: string) => t.replace('"status":"pending"', '"status":"delivered"')],
    ["a key renamed", (t: string) => t.replace('"eventId"', '"eventID"')],
  ])(
    "the snapshot %s: moved aside (kept), its rows rebuilt from the stored bodies, told as damaged",
    async (_name, damage) => {
      await writeFile(snapshot(), damage(await readFile(snapshot(), "utf8")));
      const damaged = await readFile(snapshot(), "utf8");
      const { ob, logs } = await open();
      expect(missing(ob)).toEqual([]);
      const aside = (await readdir(home)).filter((f) => f.startsWith(`${OUTBOX_FILES.snapshot}.damaged-`));
      expect(aside).toHaveLength(1);
      expect(await readFile(join(home, aside[0]!), "utf8")).toBe(damaged);
      expect(logs.find((l) => String(l.msg).startsWith("outbox snapshot is damaged"))).toMatchObject({
        level: "error",
        rows: 20,
      });
      expect(loaded(logs)).toMatchObject({ level: "error", rowsRebuiltFromBodies: 20 });
    },
  );

  it.each([
    ["syntax-broken", (line: string) => line.replace('"op":"add"', '"op":"add"}')],
    ["a key renamed", (line: string) => line.replace('"eventId"', '"eventID"')],
    [
      "a byte of its body flipped",
      (line: string) => line.replace(/"body":"(.)/, (_m, c: string) => `"body":"${c === "A" ? "B" : "A"}`),
    ],
  ])(
    "one journal line %s: that record alone is lost, told with its line, the file kept; its event is accepted again",
    async (_name, damage) => {
      const lines = (await readFile(journal(), "utf8")).split("\n");
      lines[4] = damage(lines[4]!);
      const text = lines.join("\n");
      await writeFile(journal(), text);
      const { ob, logs } = await open();
      expect(missing(ob)).toEqual(["e24"]);
      expect(logs.find((l) => String(l.msg).startsWith("outbox journal is damaged"))).toMatchObject({
        level: "error",
        file: OUTBOX_FILES.journal,
        lines: "5",
      });
      expect(loaded(logs)).toMatchObject({ level: "error", rows: 39, recordsUnrecoverable: 1 });
      const kept = (await readdir(home)).filter((f) => f.startsWith(`${OUTBOX_FILES.journal}.damaged-`));
      expect(kept).toHaveLength(1);
      expect(await readFile(join(home, kept[0]!), "utf8")).toBe(text);
      // The lost event is accepted again: a new row, durable, delivered like any other.
      const again = await ob.add({ sentinelId: "snt_a", eventId: "e24", body: body("e24", "snt_a") });
      expect(again.created).toBe(true);
    },
  );

  it("the journal cut to 97%: the torn tail is dropped and told; the events cut off are accepted again", async () => {
    const size = (await readFile(journal())).length;
    await truncate(journal(), Math.floor(size * 0.97));
    const { ob, logs } = await open();
    const lost = missing(ob);
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.every((id) => Number(id.slice(1)) >= 20)).toBe(true);
    expect(logs.find((l) => String(l.msg).startsWith("outbox journal ended in a torn line"))).toMatchObject({
      level: "warn",
      file: OUTBOX_FILES.journal,
    });
    expect(loaded(logs)).toMatchObject({ rows: 40 - lost.length, tornLinesDropped: 1 });
    for (const id of lost)
      expect(
        (await ob.add({ sentinelId: sentinelOf(Number(id.slice(1))), eventId: id, body: body(id, "x") })).created,
      ).toBe(true);
  });

  it("reopening after a repair is quiet: what was told once is not told again", async () => {
    const lines = (await readFile(journal(), "utf8")).split("\n");
    lines[2] = lines[2]!.replace('"op":"add"', '"op":"addd"');
    await writeFile(journal(), lines.join("\n"));
    const first = await open();
    await first.ob.close();
    opened.splice(0);
    const { logs } = await open();
    expect(loaded(logs)).toMatchObject({ level: "info", recordsUnrecoverable: 0 });
  });
});
