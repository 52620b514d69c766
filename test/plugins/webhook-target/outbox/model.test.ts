import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import { makeTempHome } from "../../../support/cli.js";

type Op =
  | { op: "add"; s: number; e: number; size: number }
  | { op: "attempt"; pick: number; ok: boolean }
  | { op: "kill"; pick: number }
  | { op: "seen"; pick: number }
  | { op: "reopen"; crash: boolean };

interface ModelRow {
  status: string;
  attempts: number;
  deadReason?: string;
  seen: boolean;
  body: string;
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant("add" as const), s: fc.nat(2), e: fc.nat(6), size: fc.nat(3000) }),
  fc.record({ op: fc.constant("attempt" as const), pick: fc.nat(), ok: fc.boolean() }),
  fc.record({ op: fc.constant("kill" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("seen" as const), pick: fc.nat() }),
  fc.record({ op: fc.constant("reopen" as const), crash: fc.boolean() }),
);

describe("outbox against a reference model (fast-check)", () => {
  // The timeout guards against a hang; it is no speed check: 60 runs of real fsyncs take minutes on a loaded 2-core machine.
  it("agrees with the model after any sequence of adds, attempts, kills, reopens and crash-reopens", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 2, max: 40 }),
        async (ops, compactEvery) => {
          // On tmpfs when there is one: this checks the outbox's logic over a few thousand fsyncs, which
          // on a disk shared with busy processes took most of the test's 85 s (a simulated crash loses
          // no written data either way; kill9.test.ts kills a real writer process on the disk).
          const { home, cleanup } = await makeTempHome("svc-outbox-model-", { inMemory: true });
          let n = 0;
          const open = () =>
            Outbox.open({
              home,
              now: () => 1_000,
              newId: () => `req_${String(n++).padStart(5, "0")}`,
              logger: createMemoryLogger(),
              compactEvery,
              maxStagedBytes: 4_000,
            });
          let ob = await open();
          // A crash abandons an outbox without closing it; its file handles are released after the
          // run (its writes no longer matter then), so no handle is left to the garbage collector.
          const crashed: Array<typeof ob> = [];
          const model = new Map<string, ModelRow>();
          const keyToId = new Map<string, string>();
          const ids = () => [...model.keys()].sort();
          try {
            for (const o of ops) {
              if (o.op === "add") {
                const key = `snt_${o.s}|e${o.e}`;
                const body = JSON.stringify({ id: `e${o.e}`, sentinelId: `snt_${o.s}`, pad: "z".repeat(o.size) });
                const { row, created } = await ob.add({
                  sentinelId: `snt_${o.s}`,
                  eventId: `e${o.e}`,
                  body: Buffer.from(body),
                });
                expect(created).toBe(!keyToId.has(key));
                if (created) {
                  keyToId.set(key, row.requestId);
                  model.set(row.requestId, { status: "pending", attempts: 0, seen: false, body });
                } else {
                  expect(row.requestId).toBe(keyToId.get(key));
                }
              } else if (o.op === "attempt" || o.op === "kill" || o.op === "seen") {
                const all = ids();
                if (all.length === 0) continue;
                const id = all[o.pick % all.length]!;
                const m = model.get(id)!;
                if (o.op === "seen") {
                  await ob.markSeen(id);
                  m.seen = true;
                  continue;
                }
                if (o.op === "kill") {
                  const changed = await ob.kill(id, "sentinel_removed");
                  expect(changed).toBe(m.status === "pending");
                  if (changed) Object.assign(m, { status: "dead", deadReason: "sentinel_removed" });
                  continue;
                }
                const attempts = m.attempts + 1;
                const next = o.ok
                  ? { status: "delivered" as const }
                  : attempts >= 5
                    ? { status: "dead" as const, deadReason: "delivered_rejected" as const }
                    : { status: "pending" as const };
                const changed = await ob.update(id, {
                  ...next,
                  deliveryState: { attempts, lastError: o.ok ? null : "h answered HTTP 500", lastAt: 1 },
                });
                expect(changed).toBe(m.status === "pending");
                if (changed) Object.assign(m, { ...next, attempts });
              } else {
                if (o.crash) {
                  // A kill -9 stops the process: the abandoned outbox must not go on writing (its
                  // background compaction) while the next one loads. Letting it finish first is a
                  // crash just after it did.
                  await ob.settled();
                  crashed.push(ob);
                } else await ob.close();
                ob = await open();
              }
              for (const [id, m] of model) {
                const row = ob.get(id)!;
                expect(row, id).toBeDefined();
                expect({
                  status: row.status,
                  attempts: row.deliveryState.attempts,
                  deadReason: row.deadReason,
                  seen: row.seen,
                }).toEqual({
                  status: m.status,
                  attempts: m.attempts,
                  deadReason: m.deadReason,
                  seen: m.seen,
                });
                expect((await ob.readBody(row)).toString()).toBe(m.body);
              }
              expect(ob.size).toBe(model.size);
            }
          } finally {
            await ob.close().catch(() => undefined);
            for (const c of crashed) await c.close().catch(() => undefined);
            await cleanup();
          }
        },
      ),
      { numRuns: 60 },
    );
  }, 900_000);
});
