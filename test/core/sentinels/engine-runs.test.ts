import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SentinelDedup } from "../../../core/sentinels/dedup.js";
import { SENTINEL_PLUGINS } from "../../../core/sentinels/tokens.js";
import { resolve } from "../../../core/tokens.js";
import { FakeClock } from "../../../core/runtime/clock.js";
import { makeTempHome } from "../../support/cli.js";
import { ev, newRecorder, spec, startHarness, type Harness } from "./harness.js";

let home: string;
let cleanup: () => Promise<void>;
let h: Harness;
let clock: FakeClock;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-sentinel-runs-"));
  clock = new FakeClock();
  h = await startHarness(home, { clock, rec: { ...newRecorder(), batching: true } });
});
afterEach(async () => {
  await h.stop();
  await cleanup();
});

const ids = (n: number, prefix = "e") => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const outcomes = (r: { matched: Array<{ outcome: string }> }) => r.matched.map((m) => m.outcome);

describe("sentinel engine: runs handed to a target's deliverMany", () => {
  it("hands one sentinel's new events of one ingest over together, in order, each durable once the push returns", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    const list = ids(40);
    const r = await h.engine.ingest(
      "agentpush",
      list.map((id) => ev(id, ["s"])),
    );
    expect(outcomes(r)).toEqual(list.map(() => "delivered"));
    expect(h.rec.runs).toEqual([40]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(list);
    const fresh = new SentinelDedup(home);
    await fresh.load(p.id);
    expect([fresh.delivered(p.id), list.every((id) => fresh.has(p.id, id))]).toEqual([40, true]);
    await fresh.close();
    expect((await h.engine.project(p.id)).deliveredCount).toBe(40);
  });

  it("a single matched event goes through deliver; runs hold at most 64 events", async () => {
    await h.engine.create(spec("s"), "loopback");
    await h.engine.ingest("agentpush", [ev("one", ["s"])]);
    expect(h.rec.runs).toEqual([]);
    await h.engine.ingest(
      "agentpush",
      ids(130).map((id) => ev(id, ["s"])),
    );
    expect(h.rec.runs).toEqual([64, 64, 2]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["one", ...ids(130)]);
  });

  it("looks the target plugin up once per sentinel and ingest, however many runs it hands over", async () => {
    await h.engine.create(spec("s"), "loopback");
    // The first ingest also chooses the sentinel's ledger (once per daemon life), which asks the plugin too.
    await h.engine.ingest("agentpush", [ev("first", ["s"])]);
    h.rec.runs.length = 0;
    const plugins = resolve(h.c, SENTINEL_PLUGINS);
    const target = plugins.target.bind(plugins);
    const lookups: string[] = [];
    plugins.target = (kind: string) => {
      lookups.push(kind);
      return target(kind);
    };
    await h.engine.ingest(
      "agentpush",
      ids(130).map((id) => ev(id, ["s"])),
    );
    expect(h.rec.runs).toEqual([64, 64, 2]);
    expect(lookups).toEqual(["test"]);
  });

  it("a run stops before a repeated, seen or in-flight id, which is reported duplicate and never delivered twice", async () => {
    await h.engine.create(spec("s"), "loopback");
    h.rec.ack = "deferred";
    await h.engine.ingest("agentpush", [ev("old", ["s"])]);
    const r = await h.engine.ingest(
      "agentpush",
      ["a", "b", "a", "c", "old", "d", "e"].map((id) => ev(id, ["s"])),
    );
    expect(outcomes(r)).toEqual([
      "delivered",
      "delivered",
      "duplicate",
      "delivered",
      "duplicate",
      "delivered",
      "delivered",
    ]);
    expect(h.rec.runs).toEqual([2, 2]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["old", "a", "b", "c", "d", "e"]);
  });

  it("until count: a run never exceeds what the count still allows, and a failed event in a run does not count", async () => {
    const p = await h.engine.create(spec("s", { until: { kind: "count", n: 5 } }), "loopback");
    await h.engine.ingest("agentpush", [ev("x", ["s"]), ev("y", ["s"])]);
    h.rec.failNext = 1;
    const r = await h.engine.ingest(
      "agentpush",
      ids(8).map((id) => ev(id, ["s"])),
    );
    expect(outcomes(r)).toEqual(["failed", "delivered", "delivered", "delivered", ...Array(4).fill("expired")]);
    expect(h.rec.runs).toEqual([2, 3]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["x", "y", "e1", "e2", "e3"]);
    expect(await h.engine.project(p.id)).toMatchObject({ status: "expired", endedReason: "count", deliveredCount: 5 });
  });

  it("a run ends at the event that ends the sentinel (subject_terminal); later events are expired", async () => {
    const pr = "github:acme/api#9";
    const p = await h.engine.create(
      spec(pr, { provider: "local-gh", until: { kind: "subject_terminal" } }),
      "loopback",
    );
    const r = await h.engine.ingest("local-gh", [
      ev("e1", [pr], "github.review.submitted"),
      ev("e2", [pr], "github.pull_request.closed"),
      ev("e3", [pr], "github.review.submitted"),
    ]);
    expect(outcomes(r)).toEqual(["delivered", "delivered", "expired"]);
    expect(h.rec.runs).toEqual([2]);
    expect(await h.engine.project(p.id)).toMatchObject({ status: "expired", endedReason: "subject_terminal" });
  });

  it("until at: checked when a run is dispatched and after it; a push after the time delivers nothing", async () => {
    const p = await h.engine.create(spec("s", { until: { kind: "at", ms: clock.now() + 1000 } }), "loopback");
    h.rec.onDeliver = () => clock.advance(600);
    const r = await h.engine.ingest("agentpush", [ev("e1", ["s"]), ev("e2", ["s"]), ev("e3", ["s"]), ev("e1", ["s"])]);
    expect(outcomes(r)).toEqual(["delivered", "delivered", "delivered", "expired"]);
    expect(await h.engine.project(p.id)).toMatchObject({ status: "expired", endedReason: "at" });
    const q = await h.engine.create(spec("t", { until: { kind: "at", ms: clock.now() + 1000 } }), "loopback");
    h.rec.onDeliver = undefined;
    clock.advance(1000);
    expect(h.engine.get(q.id)?.status).toBe("active");
    const late = await h.engine.ingest("agentpush", [ev("f1", ["t"]), ev("f2", ["t"])]);
    expect(outcomes(late)).toEqual(["expired", "expired"]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["e1", "e2", "e3"]);
  });

  it("a deliverMany that rejects as a whole fails every event of the run; they are delivered when pushed again", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    h.rec.failRuns = 1;
    const r = await h.engine.ingest(
      "agentpush",
      ids(3).map((id) => ev(id, ["s"])),
    );
    expect(outcomes(r)).toEqual(["failed", "failed", "failed"]);
    expect(r.matched.map((m) => m.error)).toEqual(Array(3).fill("target is unreachable"));
    expect(h.rec.delivered).toEqual([]);
    expect((await h.engine.project(p.id)).deliveredCount).toBe(0);
    const again = await h.engine.ingest(
      "agentpush",
      ids(3).map((id) => ev(id, ["s"])),
    );
    expect(outcomes(again)).toEqual(["delivered", "delivered", "delivered"]);
    expect((await h.engine.project(p.id)).deliveredCount).toBe(3);
  });
  it("an event the target answers duplicate (another daemon accepted it) is reported duplicate, never counted", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    h.rec.ack = "duplicate";
    const one = await h.engine.ingest("agentpush", [ev("x", ["s"])]);
    const run = await h.engine.ingest(
      "agentpush",
      ids(3).map((id) => ev(id, ["s"])),
    );
    expect([outcomes(one), outcomes(run)]).toEqual([["duplicate"], ["duplicate", "duplicate", "duplicate"]]);
    expect(h.rec.runs).toEqual([3]);
    expect((await h.engine.project(p.id)).deliveredCount).toBe(0);
    expect(h.daemonEvents.filter((e) => e.type === "sentinel:matched")).toEqual([]);
    h.rec.ack = "now";
    expect(outcomes(await h.engine.ingest("agentpush", [ev("x", ["s"])]))).toEqual(["delivered"]);
  });
});
