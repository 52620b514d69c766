import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diskFullError } from "../../../core/errors.js";
import { SentinelDedup } from "../../../core/sentinels/dedup.js";
import { makeTempHome } from "../../support/cli.js";
import { atEveryWrite, installEnospc, type Enospc } from "../../support/enospc.js";

const limits = { seen: 1000, compactAfter: 6 };

/** 20 deliveries of two sentinels (compactions every 6 changes), then a close; what was acknowledged. */
async function workload(d: SentinelDedup): Promise<{ acked: Map<string, string[]>; errors: unknown[] }> {
  const acked = new Map<string, string[]>([
    ["snt_a", []],
    ["snt_b", []],
  ]);
  const errors: unknown[] = [];
  for (let i = 0; i < 10; i++) {
    for (const s of ["snt_a", "snt_b"]) {
      const e = `e${i}`;
      await d.recordDelivery(s, e, i % 3 === 0 ? "deferred" : "now").then(
        () => acked.get(s)!.push(e),
        (err: unknown) => errors.push(err),
      );
    }
  }
  await d.close().catch((err: unknown) => errors.push(err));
  return { acked, errors };
}

/**
 * ENOSPC injected at every write of the engine's dedup (journal lines, checkpoint lines,
 * snapshots), the disk staying full from there: each failure names the file and says the disk is
 * full; once space is freed every acknowledged change is there and the count is at least theirs.
 */
describe("a full disk at every write site of the sentinel dedup", () => {
  let fault: Enospc;
  beforeAll(async () => (fault = await installEnospc()));
  afterAll(() => fault.restore());

  it("never loses an acknowledged change, names the file, and loads again", async () => {
    const writes = await atEveryWrite(
      fault,
      () => makeTempHome("svc-dedup-enospc-", { inMemory: true }),
      async (home, arm) => {
        arm();
        return workload(new SentinelDedup(home, limits));
      },
      async (home, { acked, errors }, k) => {
        expect(errors.length, `write ${k} failed`).toBeGreaterThan(0);
        for (const err of errors)
          expect(diskFullError(err)?.message, `write ${k}: ${String(err)}`).toMatch(
            /^the disk is full \(ENOSPC writing [^)]+\)/,
          );
        const again = new SentinelDedup(home, limits);
        for (const [s, ids] of acked) {
          await again.load(s);
          for (const e of ids) expect(again.has(s, e), `write ${k}: ${s} ${e}`).toBe(true);
          expect(again.delivered(s), `write ${k}: count of ${s}`).toBeGreaterThanOrEqual(ids.length);
        }
        await again.close();
      },
    );
    expect(writes).toBeGreaterThan(10);
  });
});
