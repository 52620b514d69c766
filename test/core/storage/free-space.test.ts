import { statfs } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { daemonRoom, diskSpace, noRoomToStart, roomFor } from "../../../core/storage/free-space.js";
import { makeTempHome } from "../../support/cli.js";

describe("the free-space rule", () => {
  it("rounds each file up to whole blocks and adds the daemon's room", async () => {
    const probe = async () => ({ free: 100 * 1024, blockSize: 4096 });
    expect(await roomFor("/x", [], probe)).toEqual({ ok: true, free: 100 * 1024, need: 64 * 1024 });
    // 1 byte and 4097 bytes: 1 + 2 blocks.
    expect(await roomFor("/x", [1, 4097], probe)).toEqual({ ok: true, free: 100 * 1024, need: 64 * 1024 + 3 * 4096 });
    expect((await roomFor("/x", [40 * 1024], probe))?.ok).toBe(false);
    // Large blocks: 16 of them.
    expect(daemonRoom(64 * 1024)).toBe(16 * 64 * 1024);
    // Unknown free space holds nothing back.
    expect(await roomFor("/x", [1 << 30], async () => undefined)).toBeUndefined();
  });

  it("reads a home that does not exist yet from its nearest folder", async () => {
    const t = await makeTempHome("svc-free-space-");
    try {
      const s = await statfs(t.home);
      const got = await diskSpace(join(t.home, "not", "yet"));
      expect(got?.blockSize).toBe(s.bsize);
      expect(got!.free).toBeGreaterThan(0);
    } finally {
      await t.cleanup();
    }
  });

  it("a refused start names the KiB needed and free, and the fix", () => {
    const e = noRoomToStart("/h", { ok: false, free: 5000, need: 65536 });
    expect(e.code).toBe("unavailable");
    expect(e.message).toBe(
      "the disk holding $SVC_HOME (/h) is full: svc needs about 64 KiB free to start (runtime.json, the log and " +
        "the first journal records) and 4 KiB are free; free space on that filesystem and start again (nothing was " +
        "written: the journals and the outbox are as the last run left them)",
    );
    const cause = Object.assign(new Error("ENOSPC"), { code: "ENOSPC", path: "/h/runtime.json" });
    expect(noRoomToStart("/h", { ok: false, free: 0, need: 65536 }, cause).message).toMatch(
      /^the disk holding \$SVC_HOME \(\/h\) is full \(ENOSPC writing runtime\.json\): .* 0 KiB are free; .*\(no accepted event is lost/,
    );
  });
});
