import fc from "fast-check";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEDUP_LIMITS, SentinelDedup, type DedupLimits } from "../../../core/sentinels/dedup.js";

type Op = { op: "now" | "deferred" | "seen"; e: number } | { op: "reload" };

/** The model: what dedup must answer, without files; `seen` keeps the last `seenLimit` ids marked seen. */
class Model {
  seen = new Set<string>();
  inflight = new Set<string>();
  delivered = 0;
  constructor(private readonly seenLimit: number) {}
  private markSeen(id: string): void {
    this.inflight.delete(id);
    this.seen.delete(id);
    this.seen.add(id);
    while (this.seen.size > this.seenLimit) this.seen.delete(this.seen.values().next().value as string);
  }
  apply(op: Op): void {
    if (op.op === "reload") return;
    const id = `e${op.e}`;
    // Marking an id seen that is already seen (and not in flight) changes nothing, not even its
    // place in the bound: it is no new delivery.
    if (op.op === "seen") {
      if (!this.seen.has(id) || this.inflight.has(id)) this.markSeen(id);
    } else {
      this.delivered += 1;
      if (op.op === "deferred") this.inflight.add(id);
      else this.markSeen(id);
    }
  }
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom("now" as const, "deferred" as const, "seen" as const), e: fc.nat({ max: 8 }) }),
  fc.constant({ op: "reload" as const }),
);

describe("sentinel dedup against a model (fast-check)", () => {
  it.each([
    ["small bounds, so eviction and compaction happen", { seen: 3, compactAfter: 4 }],
    ["the daemon's bounds", DEDUP_LIMITS],
  ] as Array<[string, DedupLimits]>)(
    "answers like the model through any sequence of deliveries, markSeen and reloads (%s)",
    async (_what, limits) => {
      await fc.assert(
        fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
          const home = await mkdtemp(join(tmpdir(), "svc-dedup-model-"));
          let d = new SentinelDedup(home, limits);
          try {
            const model = new Model(limits.seen);
            for (const op of ops) {
              if (op.op === "reload") {
                await d.close();
                d = new SentinelDedup(home, limits);
              } else if (op.op === "seen") await d.markSeen("snt_m", `e${op.e}`);
              else await d.recordDelivery("snt_m", `e${op.e}`, op.op);
              model.apply(op);
              await d.load("snt_m");
              for (let e = 0; e <= 8; e++)
                expect(d.has("snt_m", `e${e}`)).toBe(model.seen.has(`e${e}`) || model.inflight.has(`e${e}`));
              expect(new Set(d.inflight("snt_m"))).toEqual(model.inflight);
              expect(d.delivered("snt_m")).toBe(model.delivered);
            }
          } finally {
            // Closed also when an expectation failed, so no compaction writes while the home goes.
            await d.close();
            await rm(home, { recursive: true, force: true });
          }
        }),
        { numRuns: 40 },
      );
    },
  );
});
