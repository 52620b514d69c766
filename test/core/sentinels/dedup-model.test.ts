import fc from "fast-check";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEDUP_LIMIT, SentinelDedup } from "../../../core/sentinels/dedup.js";

type Op = { op: "now" | "deferred" | "seen"; e: number } | { op: "reload" };

/** The model: what dedup must answer, without files (the bound is never reached here). */
class Model {
  seen = new Set<string>();
  inflight = new Set<string>();
  delivered = 0;
  apply(op: Op): void {
    if (op.op === "reload") return;
    const id = `e${op.e}`;
    if (op.op === "seen") {
      this.inflight.delete(id);
      this.seen.add(id);
    } else {
      this.delivered += 1;
      if (op.op === "deferred") this.inflight.add(id);
      else {
        this.inflight.delete(id);
        this.seen.add(id);
      }
    }
  }
}

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constantFrom("now" as const, "deferred" as const, "seen" as const), e: fc.nat({ max: 8 }) }),
  fc.constant({ op: "reload" as const }),
);

describe("sentinel dedup against a model (fast-check)", () => {
  it("answers like the model through any sequence of deliveries, markSeen and reloads", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { minLength: 1, maxLength: 25 }), async (ops) => {
        const home = await mkdtemp(join(tmpdir(), "svc-dedup-model-"));
        try {
          let d = new SentinelDedup(home);
          const model = new Model();
          for (const op of ops) {
            if (op.op === "reload") {
              await d.close();
              d = new SentinelDedup(home);
            }
            else if (op.op === "seen") await d.markSeen("snt_m", `e${op.e}`);
            else await d.recordDelivery("snt_m", `e${op.e}`, op.op);
            model.apply(op);
            await d.load("snt_m");
            for (let e = 0; e <= 8; e++) expect(d.has("snt_m", `e${e}`)).toBe(model.seen.has(`e${e}`) || model.inflight.has(`e${e}`));
            expect(new Set(d.inflight("snt_m"))).toEqual(model.inflight);
            expect(d.delivered("snt_m")).toBe(model.delivered);
          }
          await d.close();
        } finally {
          await rm(home, { recursive: true, force: true });
        }
      }),
      { numRuns: 40 },
    );
    expect(DEDUP_LIMIT).toBe(1000);
  });
});
