import { mkdir, open as openFile, readFile, readdir, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeClock, createRandom } from "../../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { BodyStore } from "../../../../plugins/webhook-target/outbox/body-store.js";
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import type { OutboxRow } from "../../../../plugins/webhook-target/outbox/row.js";
import { Journal, parseJournal } from "../../../../plugins/webhook-target/outbox/journal.js";
import { OUTBOX_FILES } from "../../../../plugins/webhook-target/outbox/persistence.js";
import { makeTempHome } from "../../../support/cli.js";

const HOUR = 3_600_000;
const body = (id: string, sentinelId = "snt_1", pad = 0) =>
  Buffer.from(JSON.stringify({ id, type: "t.o.a", subjects: ["s"], time: "t", sentinelId, data: "x".repeat(pad) }));

describe("webhook outbox", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let clock: FakeClock;
  const opened: Outbox[] = [];
  const open = async (extra: { cap?: number; compactEvery?: number; hotBodyBytes?: number } = {}) => {
    const random = createRandom(clock);
    const ob = await Outbox.open({
      home,
      now: () => clock.now(),
      newId: () => `req_${random.ulid()}`,
      logger: createMemoryLogger(),
      ...extra,
    });
    opened.push(ob);
    return ob;
  };
  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-outbox-"));
    clock = new FakeClock(Date.UTC(2026, 0, 1));
  });
  afterEach(async () => {
    for (const ob of opened.splice(0)) await ob.close().catch(() => undefined);
    await cleanup();
  });

  it("adds a pending row once per (sentinelId, eventId), also under concurrent duplicates", async () => {
    const ob = await open();
    const [a, b, c] = await Promise.all([
      ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") }),
      ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") }),
      ob.add({ sentinelId: "snt_2", eventId: "e1", body: body("e1", "snt_2") }),
    ]);
    expect(a.created).toBe(true);
    expect(b.created).toBe(false);
    expect(b.row.requestId).toBe(a.row.requestId);
    expect(c.created).toBe(true);
    expect(a.row).toMatchObject({
      sentinelId: "snt_1",
      eventId: "e1",
      cursor: null,
      status: "pending",
      deliveryState: { attempts: 0, lastError: null, lastAt: null },
    });
    expect(a.row.requestId).not.toContain(".");
    expect((await ob.readBody(a.row)).equals(body("e1"))).toBe(true);
    expect((await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") })).created).toBe(false);
    expect(ob.size).toBe(2);
  });

  it("is durable across reopen: rows, statuses and exact bytes", async () => {
    const ob = await open();
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1", "snt_1", 1000) });
    await ob.update(row.requestId, {
      status: "pending",
      deliveryState: { attempts: 1, lastError: "x.test answered HTTP 500", lastAt: 5 },
    });
    await ob.close();
    const again = await open();
    const back = again.get(row.requestId)!;
    expect(back.deliveryState).toEqual({ attempts: 1, lastError: "x.test answered HTTP 500", lastAt: 5 });
    expect((await again.readBody(back)).equals(body("e1", "snt_1", 1000))).toBe(true);
  });

  it("replays a terminal row back to pending (attempts reset, same body), durably, and never a pending one", async () => {
    const ob = await open();
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1", "snt_1", 500) });
    const { row: live } = await ob.add({ sentinelId: "snt_1", eventId: "e2", body: body("e2") });
    await ob.update(row.requestId, {
      status: "dead",
      deliveryState: { attempts: 5, lastError: "x.test answered HTTP 500", lastAt: 5 },
      deadReason: "delivered_rejected",
    });
    clock.advance(1_000);
    const changed = await ob.replay([row.requestId, live.requestId, "req_gone"]);
    expect(changed.map((r) => r.requestId)).toEqual([row.requestId]);
    await ob.close();
    const again = await open();
    const back = again.get(row.requestId)!;
    expect(back).toMatchObject({
      status: "pending",
      deliveryState: { attempts: 0, lastError: null, lastAt: null },
      replays: 1,
      replayedAt: clock.now(),
    });
    expect(back.deadReason).toBeUndefined();
    expect((await again.readBody(back)).equals(body("e1", "snt_1", 500))).toBe(true);
    // After a compaction (the snapshot carries the fields) and a second replay.
    await again.update(row.requestId, {
      status: "delivered",
      deliveryState: { attempts: 1, lastError: null, lastAt: 9 },
    });
    await again.replay([row.requestId]);
    await again.compact();
    await again.close();
    expect((await open()).get(row.requestId)).toMatchObject({ status: "pending", replays: 2 });
  });

  it("implements the state table: terminal rows never change status again", async () => {
    const ob = await open();
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") });
    expect(
      await ob.update(row.requestId, {
        status: "delivered",
        deliveryState: { attempts: 1, lastError: null, lastAt: 1 },
      }),
    ).toBe(true);
    expect(
      await ob.update(row.requestId, {
        status: "dead",
        deliveryState: { attempts: 2, lastError: "x", lastAt: 2 },
        deadReason: "delivered_rejected",
      }),
    ).toBe(false);
    expect(await ob.kill(row.requestId, "sentinel_removed")).toBe(false);
    expect(ob.get(row.requestId)!.status).toBe("delivered");
    const { row: r2 } = await ob.add({ sentinelId: "snt_1", eventId: "e2", body: body("e2") });
    const { row: r3 } = await ob.add({ sentinelId: "snt_9", eventId: "e3", body: body("e3", "snt_9") });
    const killed = await ob.killSentinel("snt_1", "sentinel_removed");
    expect(killed.map((r) => r.requestId)).toEqual([r2.requestId]);
    expect(ob.get(r2.requestId)).toMatchObject({ status: "dead", deadReason: "sentinel_removed" });
    expect(ob.get(r3.requestId)!.status).toBe("pending");
    expect(
      ob
        .unseenTerminal()
        .map((r) => r.requestId)
        .sort(),
    ).toEqual([row.requestId, r2.requestId].sort());
    await ob.markSeen(row.requestId);
    expect(ob.unseenTerminal().map((r) => r.requestId)).toEqual([r2.requestId]);
  });

  it("kills a sentinel's rows, ages rows out and marks rows seen with one journal append each, not one per row", async () => {
    const ob = await open();
    const add = (sentinelId: string, n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          ob.add({ sentinelId, eventId: `${sentinelId}_${i}`, body: body(`${sentinelId}_${i}`, sentinelId) }),
        ),
      );
    const gone = (await add("snt_gone", 30)).map((r) => r.row);
    await ob.update(gone[0]!.requestId, {
      status: "delivered",
      deliveryState: { attempts: 1, lastError: null, lastAt: clock.now() },
    });
    const appends = vi.spyOn(Journal.prototype, "append");
    const killed = await ob.killSentinel("snt_gone", "sentinel_removed");
    expect(killed.map((r) => r.requestId)).toEqual(gone.slice(1).map((r) => r.requestId));
    expect(killed.every((r) => r.status === "dead" && r.deadReason === "sentinel_removed")).toBe(true);
    await ob.markSeen(...killed.map((r) => r.requestId), "req_unknown");
    expect(
      ob
        .rowsOf("snt_gone")
        .filter((r) => r.seen)
        .map((r) => r.requestId),
    ).toEqual(killed.map((r) => r.requestId));
    expect(appends).toHaveBeenCalledTimes(2);
    const old = (await add("snt_old", 20)).map((r) => r.row);
    appends.mockClear();
    clock.advance(7 * 24 * HOUR);
    const aged = await ob.reap();
    expect(aged.map((r) => r.requestId).sort()).toEqual(old.map((r) => r.requestId).sort());
    expect(
      aged.every(
        (r) =>
          r.status === "dead" &&
          r.deadReason === "age_out" &&
          r.deliveryState.lastError === "not delivered within 7 days",
      ),
    ).toBe(true);
    // One append removes the delivered row, one ages the 20 pending rows out.
    expect(appends).toHaveBeenCalledTimes(2);
    appends.mockRestore();
    await ob.close();
    opened.splice(opened.indexOf(ob), 1);
    const again = await open();
    expect(again.rowsOf("snt_old").every((r) => r.status === "dead" && r.deadReason === "age_out")).toBe(true);
    expect(again.rowsOf("snt_gone").filter((r) => r.seen)).toHaveLength(29);
  });

  it("reaps delivered rows 24 hours after delivery and ages pending rows out after 7 days", async () => {
    const ob = await open();
    const { row: d } = await ob.add({ sentinelId: "snt_1", eventId: "d", body: body("d") });
    await ob.update(d.requestId, {
      status: "delivered",
      deliveryState: { attempts: 1, lastError: null, lastAt: clock.now() },
    });
    const { row: p } = await ob.add({ sentinelId: "snt_1", eventId: "p", body: body("p") });
    clock.advance(24 * HOUR - 1);
    expect(await ob.reap()).toEqual([]);
    expect(ob.get(d.requestId)).toBeDefined();
    clock.advance(1);
    await ob.compact();
    await ob.reap();
    expect(ob.get(d.requestId)).toBeUndefined();
    expect(await readdir(join(home, OUTBOX_FILES.bodies))).toEqual([p.bodyBytes.file]);
    clock.advance(6 * 24 * HOUR - 1);
    expect(await ob.reap()).toEqual([]);
    clock.advance(1);
    const aged = await ob.reap();
    expect(aged.map((r) => [r.requestId, r.status, r.deadReason])).toEqual([[p.requestId, "dead", "age_out"]]);
  });

  it("evicts the oldest terminal rows at the cap, never a pending one, and refuses new events when all are pending", async () => {
    const ob = await open({ cap: 3 });
    const rows = [];
    for (const id of ["a", "b", "c"]) {
      rows.push((await ob.add({ sentinelId: "snt_1", eventId: id, body: body(id) })).row);
      clock.advance(1);
    }
    await ob.update(rows[1]!.requestId, {
      status: "delivered",
      deliveryState: { attempts: 1, lastError: null, lastAt: 1 },
    });
    clock.advance(1);
    await ob.update(rows[0]!.requestId, {
      status: "dead",
      deliveryState: { attempts: 5, lastError: "x", lastAt: 1 },
      deadReason: "delivered_rejected",
    });
    await ob.add({ sentinelId: "snt_1", eventId: "d", body: body("d") });
    expect(ob.get(rows[1]!.requestId)).toBeUndefined();
    expect(ob.get(rows[0]!.requestId)).toBeDefined();
    await ob.add({ sentinelId: "snt_1", eventId: "e", body: body("e") });
    expect(ob.get(rows[0]!.requestId)).toBeUndefined();
    expect(ob.size).toBe(3);
    const err = await ob.add({ sentinelId: "snt_1", eventId: "f", body: body("f") }).catch((e) => e);
    expect(err).toMatchObject({ code: "unavailable" });
    expect(err.message).toMatch(/outbox is full: all 3 rows are pending/);
    expect(ob.size).toBe(3);
    await ob.compact();
    const live = ["c", "d", "e"].map((id) => ob.rowsOf("snt_1").find((r) => r.eventId === id)!);
    expect(new Set(await readdir(join(home, OUTBOX_FILES.bodies)))).toEqual(new Set(live.map((r) => r.bodyBytes.file)));
    for (const r of live) expect((await ob.readBody(r)).equals(body(r.eventId))).toBe(true);
  });

  it("records a delivery with the engine's acknowledgement in one append (lazy: with the next write), and tells a full outbox before a body is built", async () => {
    const ob = await open({ cap: 2 });
    const a = (await ob.add({ sentinelId: "snt_1", eventId: "a", body: body("a") })).row;
    const b = (await ob.add({ sentinelId: "snt_1", eventId: "b", body: body("b") })).row;
    expect(ob.refusal("snt_1", "c")?.message).toMatch(/outbox is full: all 2 rows are pending/);
    // A known event is answered with its row, never refused.
    expect(ob.refusal("snt_1", "a")).toBeUndefined();
    const delivered = { status: "delivered" as const, deliveryState: { attempts: 1, lastError: null, lastAt: 1 } };
    const lazy = ob.update(a.requestId, delivered, { seen: true, lazy: true });
    const retry = ob.update(b.requestId, {
      status: "pending",
      deliveryState: { attempts: 1, lastError: "x", lastAt: 1 },
    });
    expect(await Promise.all([lazy, retry])).toEqual([true, true]);
    expect(ob.get(a.requestId)).toMatchObject({ status: "delivered", seen: true });
    const records = parseJournal(await readFile(join(home, OUTBOX_FILES.journal), "utf8")).records.slice(-3);
    expect(records.map((r) => [r.op, (r as { requestId: string }).requestId])).toEqual([
      ["update", a.requestId],
      ["seen", a.requestId],
      ["update", b.requestId],
    ]);
    // The delivered row makes room again.
    expect(ob.refusal("snt_1", "c")).toBeUndefined();
  });

  it("accepts a row with one journal append, and changes status by appending: body files are written once, never rewritten", async () => {
    const ob = await open();
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1", "snt_1", 200_000) });
    const journal = parseJournal(await readFile(join(home, OUTBOX_FILES.journal), "utf8")).records;
    expect(journal).toHaveLength(1);
    expect(Buffer.from((journal[0] as { body: string }).body, "base64").equals(body("e1", "snt_1", 200_000))).toBe(
      true,
    );
    await ob.compact();
    const bodyPath = join(home, OUTBOX_FILES.bodies, row.bodyBytes.file);
    const before = await stat(bodyPath);
    const journalBefore = (await stat(join(home, OUTBOX_FILES.journal))).size;
    await ob.update(row.requestId, { status: "pending", deliveryState: { attempts: 1, lastError: "e", lastAt: 1 } });
    const after = await stat(bodyPath);
    expect([after.ino, after.mtimeMs]).toEqual([before.ino, before.mtimeMs]);
    expect((await stat(join(home, OUTBOX_FILES.journal))).size - journalBefore).toBeLessThan(400);
  });

  it("compacts the journal into the snapshot", async () => {
    const ob = await open({ compactEvery: 10 });
    for (let i = 0; i < 25; i++) await ob.add({ sentinelId: "snt_1", eventId: `e${i}`, body: body(`e${i}`) });
    // The snapshot and segment are written in the background while appends continue; a second
    // compaction starts only if the first finished before the last appends (timing), so this
    // waits for the first and checks what any number of them guarantees.
    let snapRows = 0;
    await vi.waitFor(
      async () => {
        snapRows = JSON.parse(await readFile(join(home, OUTBOX_FILES.snapshot), "utf8")).rows.length;
        expect(snapRows).toBeGreaterThanOrEqual(10);
      },
      { timeout: 60_000 },
    );
    const journalLines = (await readFile(join(home, OUTBOX_FILES.journal), "utf8")).split("\n").filter(Boolean);
    // Every record the snapshot covers left the live journal.
    expect(journalLines.length).toBeLessThanOrEqual(25 - snapRows);
    const segments = await readdir(join(home, OUTBOX_FILES.bodies));
    expect(segments.length).toBeLessThanOrEqual(2);
    expect(segments.every((f) => /^seg-\d+\.bin$/.test(f))).toBe(true);
    await ob.close();
    expect((await open()).size).toBe(25);
  });

  it("is settled only once the compaction an add's batch started has finished (an add resolves before it starts)", async () => {
    const ob = await open({ compactEvery: 2 });
    await ob.add({ sentinelId: "snt_1", eventId: "e0", body: body("e0") });
    await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") });
    await ob.settled();
    // Nothing writes now: the live journal was rotated away and the snapshot holds both rows.
    const files = async () => (await readdir(home)).sort();
    const before = await files();
    expect(JSON.parse(await readFile(join(home, OUTBOX_FILES.snapshot), "utf8")).rows).toHaveLength(2);
    expect((await readFile(join(home, OUTBOX_FILES.journal), "utf8")).length).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(await files()).toEqual(before);
  });

  it("drops a torn journal tail and skips an unreadable line, keeping every complete record", async () => {
    const ob = await open();
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") });
    const { row: r2 } = await ob.add({ sentinelId: "snt_1", eventId: "e2", body: body("e2") });
    await ob.update(r2.requestId, { status: "delivered", deliveryState: { attempts: 1, lastError: null, lastAt: 1 } });
    opened.splice(opened.indexOf(ob), 1);
    const journal = join(home, OUTBOX_FILES.journal);
    const lines = (await readFile(journal, "utf8")).split("\n").filter(Boolean);
    await writeFile(journal, [lines[0], "{garbage", ...lines.slice(1)].join("\n") + "\n" + '{"seq":99,"op":"upd');
    const again = await open();
    expect(again.get(row.requestId)!.status).toBe("pending");
    expect(again.get(r2.requestId)!.status).toBe("delivered");
  });

  it("cuts a torn journal tail off before appending, so the next acknowledged record survives a crash", async () => {
    // A compaction rotated the journal at seq 2, then a kill -9 tore the first record of the new
    // live journal: at restart the live journal stays live (a retired journal of that seq exists).
    const ob = await open();
    const { row: a } = await ob.add({ sentinelId: "snt_1", eventId: "a", body: body("a") });
    const { row: b } = await ob.add({ sentinelId: "snt_1", eventId: "b", body: body("b") });
    opened.splice(opened.indexOf(ob), 1);
    const journal = join(home, OUTBOX_FILES.journal);
    const lines = (await readFile(journal, "utf8")).split("\n").filter(Boolean);
    await writeFile(`${journal}.2`, lines.join("\n") + "\n");
    await writeFile(journal, '{"seq":3,"op":"upd');
    const again = await open();
    opened.splice(opened.indexOf(again), 1);
    const { row: c } = await again.add({ sentinelId: "snt_1", eventId: "c", body: body("c") });
    // Crash (no close): the next start replays the journal as it is on disk.
    const after = await open();
    for (const r of [a, b, c]) expect(after.get(r.requestId)?.status, r.eventId).toBe("pending");
    expect((await after.readBody(after.get(c.requestId)!)).equals(body("c"))).toBe(true);
    expect(await readFile(journal, "utf8")).not.toContain('"op":"upd');
  });

  it("never applies a last journal line without its newline, even when it parses", () => {
    const whole = JSON.stringify({ seq: 1, op: "seen", requestId: "req_1" });
    const torn = JSON.stringify({ seq: 2, op: "seen", requestId: "req_2" });
    expect(parseJournal(`${whole}\n${torn}`)).toEqual({
      records: [JSON.parse(whole)],
      damaged: [],
      tornBytes: torn.length,
    });
    expect(parseJournal(`${whole}\n`)).toEqual({ records: [JSON.parse(whole)], damaged: [], tornBytes: 0 });
  });

  it("rebuilds rows from the stored bodies when the snapshot is damaged, and removes orphan bodies", async () => {
    const ob = await open();
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") });
    await ob.close();
    opened.splice(0);
    await writeFile(join(home, OUTBOX_FILES.snapshot), '{"version":1,"seq":');
    await writeFile(join(home, OUTBOX_FILES.bodies, "req_orphan.json"), '{"id":"torn');
    const again = await open();
    expect(again.get(row.requestId)).toMatchObject({ sentinelId: "snt_1", eventId: "e1", status: "pending" });
    expect((await again.readBody(again.get(row.requestId)!)).equals(body("e1"))).toBe(true);
    const files = await readdir(home);
    expect(files.some((f) => f.startsWith(`${OUTBOX_FILES.snapshot}.damaged-`))).toBe(true);
    expect(await readdir(join(home, OUTBOX_FILES.bodies))).toEqual([row.bodyBytes.file]);
  });

  it("ends a pending row whose stored body vanished as dead, and detects an altered body", async () => {
    const ob = await open({ hotBodyBytes: 0 });
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") });
    const { row: r2 } = await ob.add({ sentinelId: "snt_1", eventId: "e2", body: body("e2") });
    await ob.compact();
    const ref = ob.get(r2.requestId)!.bodyBytes;
    const segment = await openFile(join(home, OUTBOX_FILES.bodies, ref.file), "r+");
    await segment.write(Buffer.from("X"), 0, 1, ref.offset! + 3);
    await segment.close();
    await expect(ob.readBody(ob.get(r2.requestId)!)).rejects.toThrow(/does not match/);
    await ob.close();
    opened.splice(0);
    const { rm } = await import("node:fs/promises");
    await rm(join(home, OUTBOX_FILES.bodies, ob.get(row.requestId)!.bodyBytes.file));
    const again = await open();
    expect(again.get(row.requestId)).toMatchObject({ status: "dead", deadReason: "delivered_rejected" });
  });

  it("keeps pending rows' bodies in memory after compaction (within its budget) and reads terminal rows' from their segment", async () => {
    const ob = await open({ hotBodyBytes: 150 });
    const rows = [];
    for (const id of ["a", "b", "c"])
      rows.push((await ob.add({ sentinelId: "snt_1", eventId: id, body: body(id, "snt_1", 20) })).row);
    await ob.compact();
    const [a, b, c] = rows.map((r) => ob.get(r.requestId)!);
    // Each body is 100-odd bytes: the budget of 150 keeps the last one put (c) and drops a and b.
    const segment = await openFile(join(home, OUTBOX_FILES.bodies, c!.bodyBytes.file), "r+");
    for (const row of [a!, b!, c!]) await segment.write(Buffer.from("X"), 0, 1, row.bodyBytes.offset! + 3);
    await segment.close();
    expect((await ob.readBody(c!)).toString()).toBe(body("c", "snt_1", 20).toString());
    await expect(ob.readBody(a!)).rejects.toThrow(/does not match/);
    await ob.update(c!.requestId, {
      status: "delivered",
      deliveryState: { attempts: 1, lastError: null, lastAt: clock.now() },
    });
    await expect(ob.readBody(ob.get(c!.requestId)!)).rejects.toThrow(/does not match/);
  });

  it("creates its files with mode 0600", async () => {
    const ob = await open();
    const { row } = await ob.add({ sentinelId: "snt_1", eventId: "e1", body: body("e1") });
    await ob.compact();
    for (const f of [OUTBOX_FILES.snapshot, OUTBOX_FILES.journal, join(OUTBOX_FILES.bodies, row.bodyBytes.file)]) {
      expect((await stat(join(home, f))).mode & 0o777).toBe(0o600);
    }
  });

  it("writes one segment per compaction and reads back exact bytes by offset, also after reopening", async () => {
    const ob = await open();
    const rows = [];
    for (const id of ["a", "b", "c"])
      rows.push((await ob.add({ sentinelId: "snt_1", eventId: id, body: body(id, "snt_1", 1000) })).row);
    await ob.compact();
    const refs = rows.map((r) => ob.get(r.requestId)!.bodyBytes);
    expect(new Set(refs.map((r) => r.file)).size).toBe(1);
    expect(refs.every((r) => typeof r.offset === "number")).toBe(true);
    expect(await readdir(join(home, OUTBOX_FILES.bodies))).toEqual([refs[0]!.file]);
    await ob.close();
    opened.splice(0);
    const again = await open();
    for (const r of rows)
      expect((await again.readBody(again.get(r.requestId)!)).equals(body(r.eventId, "snt_1", 1000))).toBe(true);
    expect(JSON.parse(await readFile(join(home, OUTBOX_FILES.snapshot), "utf8")).version).toBe(3);
  });

  it("recovers from a crash after the journal was rotated but before the snapshot was written", async () => {
    const ob = await open();
    const { row: a } = await ob.add({ sentinelId: "snt_1", eventId: "a", body: body("a") });
    const { row: b } = await ob.add({ sentinelId: "snt_1", eventId: "b", body: body("b") });
    await ob.update(b.requestId, { status: "delivered", deliveryState: { attempts: 1, lastError: null, lastAt: 1 } });
    opened.splice(0);
    const journal = join(home, OUTBOX_FILES.journal);
    const lines = (await readFile(journal, "utf8")).split("\n").filter(Boolean);
    // Retired journal with the first two records, live journal with the third, a torn segment no
    // snapshot names; and, as a rotation leaves it, no length record of the old file.
    await rm(`${journal}.length`);
    await writeFile(`${journal}.2`, lines.slice(0, 2).join("\n") + "\n");
    await writeFile(journal, lines[2] + "\n");
    await writeFile(join(home, OUTBOX_FILES.bodies, "seg-2.bin"), '{"requestId":"x","length":50}\n{"id"');
    const again = await open();
    expect(again.get(a.requestId)!.status).toBe("pending");
    expect(again.get(b.requestId)!.status).toBe("delivered");
    expect((await again.readBody(again.get(a.requestId)!)).equals(body("a"))).toBe(true);
    const files = await readdir(home);
    const retired = (f: string) => f.startsWith(`${OUTBOX_FILES.journal}.`) && /^\d+$/.test(f.split(".").pop()!);
    expect(files.filter(retired)).toEqual([]);
    expect(files.filter((f) => f.endsWith(".missing"))).toEqual([]);
    expect(await readdir(join(home, OUTBOX_FILES.bodies))).toEqual([again.get(a.requestId)!.bodyBytes.file]);
  });

  it("loads files written by the earlier layout (version 1 snapshot, one file per body)", async () => {
    const bodies = join(home, OUTBOX_FILES.bodies);
    await mkdir(bodies, { recursive: true });
    const old = body("old", "snt_1", 300);
    const { createHash } = await import("node:crypto");
    const ref = { file: "req_old.json", length: old.length, sha256: createHash("sha256").update(old).digest("hex") };
    const row = {
      sentinelId: "snt_1",
      requestId: "req_old",
      eventId: "old",
      bodyBytes: ref,
      cursor: null,
      deliveryState: { attempts: 1, lastError: "x", lastAt: 5 },
      status: "pending",
      createdAt: 1,
      updatedAt: 5,
      seen: false,
    };
    await writeFile(join(bodies, "req_old.json"), old);
    await writeFile(join(home, OUTBOX_FILES.snapshot), JSON.stringify({ version: 1, seq: 1, rows: [row] }));
    const inline = body("new");
    const newRow = {
      ...row,
      requestId: "req_new",
      eventId: "new",
      bodyBytes: {
        file: "req_new.json",
        length: inline.length,
        sha256: createHash("sha256").update(inline).digest("hex"),
      },
      deliveryState: { attempts: 0, lastError: null, lastAt: null },
    };
    await writeFile(
      join(home, OUTBOX_FILES.journal),
      JSON.stringify({ seq: 2, op: "add", row: newRow, body: inline.toString("base64") }) + "\n",
    );
    const ob = await open();
    expect((await ob.readBody(ob.get("req_old")!)).equals(old)).toBe(true);
    expect((await ob.readBody(ob.get("req_new")!)).equals(inline)).toBe(true);
    expect(ob.get("req_old")!.deliveryState.attempts).toBe(1);
    expect((await readdir(bodies)).sort()).toEqual(["req_old.json", ob.get("req_new")!.bodyBytes.file].sort());
    await ob.update("req_old", { status: "delivered", deliveryState: { attempts: 2, lastError: null, lastAt: 6 } });
    clock.advance(25 * HOUR);
    await ob.reap();
    expect(await readdir(bodies)).toEqual([ob.get("req_new")!.bodyBytes.file]);
  });

  it("moves the live bodies of a mostly-removed segment at the next compaction and deletes the old segment", async () => {
    const ob = await open();
    const rows = [];
    for (const id of ["a", "b", "c", "d"])
      rows.push((await ob.add({ sentinelId: "snt_1", eventId: id, body: body(id, "snt_1", 2000) })).row);
    await ob.compact();
    const first = ob.get(rows[0]!.requestId)!.bodyBytes.file;
    for (const r of rows.slice(0, 3))
      await ob.update(r.requestId, { status: "delivered", deliveryState: { attempts: 1, lastError: null, lastAt: 1 } });
    clock.advance(25 * HOUR);
    await ob.reap();
    expect(await readdir(join(home, OUTBOX_FILES.bodies))).toEqual([first]);
    await ob.compact();
    const moved = ob.get(rows[3]!.requestId)!.bodyBytes;
    expect(moved.file).not.toBe(first);
    expect(await readdir(join(home, OUTBOX_FILES.bodies))).toEqual([moved.file]);
    expect((await ob.readBody(ob.get(rows[3]!.requestId)!)).equals(body("d", "snt_1", 2000))).toBe(true);
    await ob.close();
    opened.splice(0);
    const again = await open();
    expect((await again.readBody(again.get(rows[3]!.requestId)!)).equals(body("d", "snt_1", 2000))).toBe(true);
  });

  it("moving a sparse segment's live bodies reads back only those not in memory (a pending row's body is)", async () => {
    const ob = await open();
    const ids = ["a", "b", "c", "d", "e"];
    const rows = new Map<string, OutboxRow>();
    for (const id of ids)
      rows.set(id, (await ob.add({ sentinelId: "snt_1", eventId: id, body: body(id, "snt_1", 2000) })).row);
    await ob.compact();
    const first = rows.get("a")!.bodyBytes.file;
    const deliver = (id: string) =>
      ob.update(rows.get(id)!.requestId, {
        status: "delivered",
        deliveryState: { attempts: 1, lastError: null, lastAt: clock.now() },
      });
    for (const id of ["a", "b", "c"]) await deliver(id);
    clock.advance(25 * HOUR);
    await deliver("e");
    await ob.reap();
    // Left in the segment: d (pending, its body kept in memory) and e (delivered, read back).
    expect(await readdir(join(home, OUTBOX_FILES.bodies))).toEqual([first]);
    const stored = ob.get(rows.get("e")!.requestId)!.bodyBytes;
    const reads = vi.spyOn(BodyStore.prototype, "read");
    await ob.compact();
    expect(reads.mock.calls.map(([ref]) => ref)).toEqual([stored]);
    reads.mockRestore();
    const moved = ["d", "e"].map((id) => ob.get(rows.get(id)!.requestId)!);
    expect(new Set(await readdir(join(home, OUTBOX_FILES.bodies)))).toEqual(
      new Set(moved.map((r) => r.bodyBytes.file)),
    );
    expect(moved.every((r) => r.bodyBytes.file !== first)).toBe(true);
    for (const r of moved) expect((await ob.readBody(r)).equals(body(r.eventId, "snt_1", 2000))).toBe(true);
  });
});
