import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diskFullError } from "../../../core/errors.js";
import type { SentinelRecord } from "../../../core/sentinels/service.js";
import { SentinelStore } from "../../../core/sentinels/store.js";
import { makeTempHome } from "../../support/cli.js";
import { atEveryWrite, installEnospc, type Enospc } from "../../support/enospc.js";

const record = (id: string): SentinelRecord =>
  ({
    id,
    status: "active",
    createdAt: 1,
    updatedAt: 1,
    deliveredCount: 0,
    spec: {
      match: [{ subject: `s:${id}` }],
      until: { kind: "never" },
      provider: "agentpush",
      target: { kind: "session", sessionId: "ses_x" },
    },
  }) as unknown as SentinelRecord;

/**
 * ENOSPC injected at every write of sentinels.json (group-committed creates, an update, a removal),
 * the disk staying full from there: each failure names sentinels.json and says the disk is full;
 * once space is freed the file loads with every acknowledged change and nothing else half-done.
 */
describe("a full disk at every write of sentinels.json", () => {
  let fault: Enospc;
  beforeAll(async () => (fault = await installEnospc()));
  afterAll(() => fault.restore());

  it("never loses an acknowledged create, update or removal, and names the file", async () => {
    const writes = await atEveryWrite(
      fault,
      () => makeTempHome("svc-store-enospc-", { inMemory: true }),
      async (home, arm) => {
        const store = new SentinelStore(home);
        await store.load();
        arm();
        const errors: unknown[] = [];
        const created = new Set<string>();
        for (const round of [0, 1, 2]) {
          const ids = Array.from({ length: 5 }, (_, i) => `snt_${round}_${i}`);
          const results = await Promise.allSettled(ids.map((id) => store.insert(record(id))));
          results.forEach((r, i) => (r.status === "fulfilled" ? created.add(ids[i]!) : errors.push(r.reason)));
        }
        let updated = false;
        let removed = false;
        if (created.has("snt_0_0"))
          await store
            .update("snt_0_0", (r) => ({ ...r, status: "expired" }))
            .then(
              () => (updated = true),
              (e: unknown) => errors.push(e),
            );
        if (created.has("snt_0_1"))
          await store.remove("snt_0_1").then(
            () => (removed = true),
            (e: unknown) => errors.push(e),
          );
        return { errors, created, updated, removed };
      },
      async (home, { errors, created, updated, removed }, k) => {
        expect(errors.length, `write ${k} failed`).toBeGreaterThan(0);
        for (const err of errors)
          expect(diskFullError(err)?.message, `write ${k}: ${String(err)}`).toMatch(
            /^the disk is full \(ENOSPC writing sentinels\.json\)/,
          );
        const again = new SentinelStore(home);
        const ids = new Set((await again.load()).map((r) => r.id));
        for (const id of created)
          if (!(removed && id === "snt_0_1")) expect(ids.has(id), `write ${k}: ${id}`).toBe(true);
        if (updated && created.has("snt_0_0")) expect(again.get("snt_0_0")?.status).toBe("expired");
        if (removed) expect(ids.has("snt_0_1")).toBe(false);
      },
    );
    expect(writes).toBeGreaterThan(3);
  });
});
