import { chmod, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SentinelView } from "../../../../core/plugin-api/index.js";
import { FakeClock, createRandom } from "../../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import { checkOutboxFiles } from "../../../../plugins/webhook-target/outbox/check.js";
import { Outbox } from "../../../../plugins/webhook-target/outbox/outbox.js";
import { OUTBOX_FILES } from "../../../../plugins/webhook-target/outbox/persistence.js";
import { makeTempHome } from "../../../support/cli.js";

const body = (id: string) =>
  Buffer.from(
    JSON.stringify({ id, type: "t.o.a", subjects: ["s"], time: "t", sentinelId: "snt_a", data: "x".repeat(200) }),
  );
const sentinels: SentinelView[] = [
  {
    id: "snt_a",
    status: "active",
    createdAt: 0,
    spec: { match: [{ subject: "s" }], until: { kind: "never" }, target: { kind: "webhook" } },
  },
];

describe("checkOutboxFiles (svc doctor, read-only)", () => {
  let home: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => {
    ({ home, cleanup } = await makeTempHome("svc-outbox-check-", { inMemory: true }));
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const random = createRandom(clock);
    const ob = await Outbox.open({
      home,
      now: () => clock.now(),
      newId: () => `req_${random.ulid()}`,
      logger: createMemoryLogger(),
    });
    for (let i = 0; i < 5; i++) await ob.add({ sentinelId: "snt_a", eventId: `e${i}`, body: body(`e${i}`) });
    await ob.compact();
    for (let i = 5; i < 10; i++) await ob.add({ sentinelId: "snt_a", eventId: `e${i}`, body: body(`e${i}`) });
    // A crash: the outbox is abandoned, its files as a kill -9 leaves them.
  });
  afterEach(() => cleanup());
  const segment = async () => join(home, OUTBOX_FILES.bodies, (await readdir(join(home, OUTBOX_FILES.bodies)))[0]!);

  it("files the outbox wrote are fine", async () => {
    expect(await checkOutboxFiles(home, sentinels)).toEqual([]);
  });

  it("a pending row's body altered: an error naming the segment; nothing is changed on disk", async () => {
    const p = await segment();
    const data = await readFile(p);
    data[data.length - 20] ^= 1;
    await writeFile(p, data);
    const before = await stat(p);
    const found = await checkOutboxFiles(home, sentinels);
    expect(found).toEqual([
      expect.objectContaining({
        severity: "error",
        file: join(OUTBOX_FILES.bodies, p.split("/").at(-1)!),
        message: expect.stringContaining("1 pending row does not match"),
      }),
    ]);
    expect((await stat(p)).mtimeMs).toBe(before.mtimeMs);
  });

  it("a torn journal tail is info; pending rows of a sentinel no longer stored are info; a world-readable journal is an error", async () => {
    await writeFile(join(home, OUTBOX_FILES.journal), '0000abcd {"seq":', { flag: "a" });
    await chmod(join(home, OUTBOX_FILES.journal), 0o644);
    const found = await checkOutboxFiles(home, []);
    expect(found.map((f) => [f.severity, f.file])).toEqual([
      ["info", OUTBOX_FILES.journal],
      ["info", OUTBOX_FILES.snapshot],
      ["error", OUTBOX_FILES.journal],
    ]);
  });
});
