/**
 * Expiry of `until: at` over the daemon's real HTTP surface (in-process daemon with a fake clock
 * and a manual tick, so no real waiting): seen first at startup, at the periodic tick, at push
 * ingress and at delivery dispatch; nothing is delivered for an expired sentinel on any path.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../../core/runtime/clock.js";
import { makeTempHome } from "../support/cli.js";
import { startTestDaemon } from "../core/sentinels/harness.js";

type TestDaemon = Awaited<ReturnType<typeof startTestDaemon>>;
let home: string;
let cleanup: () => Promise<void>;
let clock: FakeClock;
let d: TestDaemon;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-expiry-e2e-"));
  clock = new FakeClock();
  d = await startTestDaemon(home, { clock });
});
afterEach(async () => {
  await d.stop();
  await cleanup();
});

const spec = (ms: number) => ({
  match: [{ subject: "job:x" }],
  until: { kind: "at", ms: clock.now() + ms },
  target: { kind: "test", name: "t" },
  provider: "agentpush",
});
const push = (id: string) => d.call("POST", "/providers/agentpush/events", { id, type: "t", subjects: ["job:x"] });
const via = (x: TestDaemon, id: string) =>
  x.logs
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === "sentinel ended:expired" && l.sentinel === id)
    .map((l) => l.via);

describe("until at over HTTP", () => {
  it("startup", async () => {
    const { body: s } = await d.call("POST", "/sentinels", spec(1000));
    await d.stop();
    clock.advance(1000);
    d = await startTestDaemon(home, { clock, rec: d.rec });
    expect(via(d, s.id)).toEqual(["startup"]);
    expect((await d.call("GET", `/sentinels/${s.id}`)).body).toMatchObject({ status: "expired", endedReason: "at" });
    expect((await push("e1")).body.matched).toEqual([]);
    expect(d.rec.delivered).toEqual([]);
  });

  it("periodic tick", async () => {
    const { body: s } = await d.call("POST", "/sentinels", spec(1000));
    clock.advance(1000);
    d.ticker.fire();
    await d.engine.settled();
    expect(via(d, s.id)).toEqual(["tick"]);
    expect((await push("e1")).body.matched).toEqual([]);
    expect(d.rec.delivered).toEqual([]);
  });

  it("push ingress", async () => {
    const { body: s } = await d.call("POST", "/sentinels", spec(1000));
    expect((await push("e0")).body.matched).toEqual([{ sentinelId: s.id, eventId: "e0", outcome: "delivered" }]);
    clock.advance(1000);
    const r = await push("e1");
    expect(r.status).toBe(200);
    expect(r.body.matched).toEqual([{ sentinelId: s.id, eventId: "e1", outcome: "expired" }]);
    expect(via(d, s.id)).toEqual(["ingress"]);
    expect(d.rec.delivered.map((x) => x.event.id)).toEqual(["e0"]);
  });

  it("delivery dispatch (time passes while a batch is being delivered; a deferred target's dispatcher asks isExpiredNow)", async () => {
    const { body: s } = await d.call("POST", "/sentinels", spec(1000));
    d.rec.onDeliver = () => clock.advance(1000);
    const r = await d.call(
      "POST",
      "/providers/agentpush/events",
      [1, 2, 3].map((i) => ({ id: `e${i}`, type: "t", subjects: ["job:x"] })),
    );
    expect(r.body.matched.map((m: { outcome: string }) => m.outcome)).toEqual(["delivered", "expired", "expired"]);
    expect(via(d, s.id)).toEqual(["dispatch"]);
    expect(await d.engine.isExpiredNow(s.id)).toBe(true);
    const { body: t } = await d.call("POST", "/sentinels", spec(1000));
    d.rec.onDeliver = undefined;
    clock.advance(1000);
    expect(await d.engine.isExpiredNow(t.id)).toBe(true);
    expect(via(d, t.id)).toEqual(["dispatch"]);
    expect(d.rec.delivered.map((x) => x.event.id)).toEqual(["e1"]);
  });
});
