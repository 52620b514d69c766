import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diskFullError } from "../../../../core/errors.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import { makeTempHome } from "../../../support/cli.js";
import { atEveryWrite, installEnospc, type Enospc } from "../../../support/enospc.js";

const body = (id: string) =>
  Buffer.from(
    JSON.stringify({ id, type: "t.o.a", subjects: ["s"], time: "t", sentinelId: "snt_1", data: "x".repeat(300) }),
  );

interface Acknowledged {
  added: Map<string, string>;
  delivered: Set<string>;
  errors: unknown[];
}

/** Adds, status changes and compactions in three rounds, then a close; records what was acknowledged. */
async function workload(ob: Outbox): Promise<Acknowledged> {
  const ack: Acknowledged = { added: new Map(), delivered: new Set(), errors: [] };
  for (let round = 0; round < 3; round++) {
    const ids = Array.from({ length: 8 }, (_, i) => `e${round}_${i}`);
    const results = await Promise.allSettled(
      ids.map((eventId) => ob.add({ sentinelId: "snt_1", eventId, body: body(eventId) })),
    );
    results.forEach((r, i) =>
      r.status === "fulfilled" ? ack.added.set(ids[i]!, r.value.row.requestId) : ack.errors.push(r.reason),
    );
    for (const id of ids.slice(0, 4)) {
      const requestId = ack.added.get(id);
      if (!requestId) continue;
      try {
        if (
          await ob.update(requestId, {
            status: "delivered",
            deliveryState: { attempts: 1, lastError: null, lastAt: 1 },
          })
        )
          ack.delivered.add(requestId);
      } catch (err) {
        ack.errors.push(err);
      }
    }
    await ob.compact().catch((err: unknown) => ack.errors.push(err));
  }
  await ob.close().catch((err: unknown) => ack.errors.push(err));
  return ack;
}

/**
 * ENOSPC injected at every write the outbox makes (journal appends, rotations, segments, snapshots),
 * one run per write site, the disk staying full from there on: every failure says the disk is full
 * and names the file; once space is freed the outbox opens on the same files, with every
 * acknowledged row, body and status change.
 */
describe("a full disk at every write site of the outbox", () => {
  let fault: Enospc;
  beforeAll(async () => (fault = await installEnospc()));
  afterAll(() => fault.restore());

  it("never loses an acknowledged record, names the file, and the next open succeeds", async () => {
    const writes = await atEveryWrite(
      fault,
      () => makeTempHome("svc-outbox-enospc-", { inMemory: true }),
      async (home, arm) => {
        const newId = idGen();
        const ob = await Outbox.open({ home, now: () => 1_000, newId, logger: createMemoryLogger() });
        arm();
        return { ack: await workload(ob), newId };
      },
      async (home, { ack, newId }, k) => {
        expect(ack.errors.length, `write ${k} failed, so something must have said so`).toBeGreaterThan(0);
        for (const err of ack.errors)
          expect(diskFullError(err)?.message, `write ${k}: ${String(err)}`).toMatch(
            /^the disk is full \(ENOSPC writing [^)]+\)/,
          );
        const logger = createMemoryLogger();
        const again = await Outbox.open({ home, now: () => 1_000, newId, logger });
        try {
          for (const [eventId, requestId] of ack.added) {
            const row = again.get(requestId);
            expect(row?.eventId, `write ${k}: acknowledged ${eventId}`).toBe(eventId);
            expect((await again.readBody(row!)).equals(body(eventId)), `write ${k}: body of ${eventId}`).toBe(true);
            if (ack.delivered.has(requestId)) expect(row!.status, `write ${k}: ${eventId} delivered`).toBe("delivered");
          }
          expect(logger.lines.map((l) => JSON.parse(l)).find((l) => l.msg === "webhook outbox loaded")).toMatchObject({
            recordsUnrecoverable: 0,
            rowsRebuiltFromBodies: 0,
            rowsWithLostBodies: 0,
          });
        } finally {
          await again.close();
        }
      },
    );
    expect(writes).toBeGreaterThan(10);
  });
});

function idGen(): () => string {
  let n = 0;
  return () => `req_${String(n++).padStart(5, "0")}`;
}
