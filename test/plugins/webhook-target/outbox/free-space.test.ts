/**
 * The outbox's compaction is optional: it runs only when its segment and snapshot leave the
 * daemon's room free (core/storage/free-space.ts). With a probe that reports little free space, a
 * compaction (on demand, from the batch trigger, at close and at open) writes and rotates nothing,
 * warns with the numbers and leaves every record in the journal; the batch trigger tries again
 * after 256 more records; with room again, the next compaction writes it all.
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";

type MemoryLogger = ReturnType<typeof createMemoryLogger>;
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import { OUTBOX_FILES } from "../../../../plugins/webhook-target/outbox/persistence.js";
import type { DiskSpace } from "../../../../core/storage/free-space.js";
import { makeTempHome } from "../../../support/cli.js";

const SKIPPED = "outbox compaction skipped: not enough free space; the journal keeps every record";
const body = (id: string) =>
  Buffer.from(
    JSON.stringify({ id, type: "t.o.a", subjects: ["s"], time: "t", sentinelId: "snt_1", data: "x".repeat(3000) }),
  );

describe("an outbox compaction without room", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  let space: DiskSpace;
  let n = 0;
  const open = (logger: MemoryLogger, extra: { compactEvery?: number } = {}) =>
    Outbox.open({
      home,
      now: () => 1_000,
      newId: () => `req_${String(n++).padStart(5, "0")}`,
      logger,
      space: async () => space,
      ...extra,
    });
  const skips = (logger: MemoryLogger) =>
    logger.lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === SKIPPED);
  const snapshotSeq = async () =>
    (JSON.parse(await readFile(join(home, OUTBOX_FILES.snapshot), "utf8")) as { seq: number }).seq;
  const onDisk = async () => ({
    segments: (await readdir(join(home, OUTBOX_FILES.bodies))).sort(),
    // A retired journal is `<journal>.<seq>`; `<journal>.length` is the live journal's length record.
    retired: (await readdir(home)).filter(
      (f) => /^\d+$/.test(f.slice(OUTBOX_FILES.journal.length + 1)) && f.startsWith(`${OUTBOX_FILES.journal}.`),
    ),
    seq: await snapshotSeq(),
  });
  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-outbox-room-", { inMemory: true }));
    space = { free: 1 << 30, blockSize: 4096 };
  });
  afterEach(() => cleanup());

  it("writes nothing, warns with the numbers, keeps every record, and compacts once there is room", async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `e${i}`);
    let ob = await open(createMemoryLogger());
    await Promise.all(ids.map((eventId) => ob.add({ sentinelId: "snt_1", eventId, body: body(eventId) })));
    const before = await onDisk();

    // 64 KiB free is the daemon's room alone: nothing more fits.
    space = { free: 64 * 1024, blockSize: 4096 };
    const logger = createMemoryLogger();
    await ob.close();
    ob = await open(logger);
    await ob.compact();
    await ob.close();
    expect(await onDisk()).toEqual(before);
    const warned = skips(logger);
    // At open, on demand and at close.
    expect(warned).toHaveLength(3);
    expect(warned[0]).toMatchObject({ level: "warn", freeBytes: 64 * 1024 });
    // Ten 3 KB bodies in one segment (8 blocks) and a snapshot (1 block), plus the room.
    expect(warned[0]!.neededBytes).toBe(64 * 1024 + 9 * 4096);

    // Room again: the open's compaction writes every row; the bodies are all there.
    space = { free: 1 << 30, blockSize: 4096 };
    const again = createMemoryLogger();
    ob = await open(again);
    try {
      expect(skips(again)).toEqual([]);
      const after = await onDisk();
      expect(after.seq).toBeGreaterThan(before.seq);
      expect(after.retired).toEqual([]);
      expect(after.segments.length).toBeGreaterThan(0);
      const rows = ob.rowsOf("snt_1");
      expect(rows.map((r) => r.eventId).sort()).toEqual(ids);
      for (const r of rows) expect((await ob.readBody(r)).equals(body(r.eventId))).toBe(true);
    } finally {
      await ob.close();
    }
  });

  it("the batch trigger tries again only after 256 more records", async () => {
    const logger = createMemoryLogger();
    const ob = await open(logger, { compactEvery: 4 });
    try {
      space = { free: 64 * 1024, blockSize: 4096 };
      const add = (eventId: string) => ob.add({ sentinelId: "snt_1", eventId, body: body(eventId) });
      for (let i = 0; i < 8; i++) await add(`a${i}`);
      // Tried at the 4th record, skipped; not again before 4 + 256 records, even with room back.
      expect(skips(logger)).toHaveLength(1);
      space = { free: 1 << 30, blockSize: 4096 };
      for (let i = 0; i < 250; i++) await add(`b${i}`);
      await ob.settled();
      expect(await snapshotSeq()).toBe(0);
      for (let i = 0; i < 10; i++) await add(`c${i}`);
      await ob.settled();
      expect(await snapshotSeq()).toBeGreaterThanOrEqual(260);
      expect(skips(logger)).toHaveLength(1);
    } finally {
      await ob.close();
    }
  });
});
