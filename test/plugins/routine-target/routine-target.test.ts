import { describe, expect, it } from "vitest";
import routine from "../../../plugins/routine-target/index.js";
import type { PluginContext, TargetInstance } from "../../../core/plugin-api/index.js";

describe("routine target", () => {
  it("has the frozen shape and refuses creation (and delivery) with not_implemented", async () => {
    const t = (await routine.setup({} as PluginContext)) as TargetInstance;
    expect(t.inputSchema.safeParse({ kind: "routine", routineId: "r1" }).success).toBe(true);
    expect(t.inputSchema.safeParse({ kind: "routine" }).success).toBe(false);
    await expect(
      t.create({ kind: "routine", routineId: "r1" }, { sentinelId: "snt_x", principal: "loopback" }),
    ).rejects.toMatchObject({ code: "not_implemented" });
    expect(t.project({ kind: "routine", routineId: "r1" })).toEqual({ kind: "routine", routineId: "r1" });
    await expect(
      t.deliver({ sentinel: {} as never, event: { id: "e", type: "t", subjects: ["s"] } }),
    ).rejects.toMatchObject({ code: "not_implemented" });
  });
});
