import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeClock } from "../../../core/runtime/clock.js";
import { SentinelDedup } from "../../../core/sentinels/dedup.js";
import { SENTINEL_STORE } from "../../../core/sentinels/tokens.js";
import { SERVICES, resolve } from "../../../core/tokens.js";
import { makeTempHome } from "../../support/cli.js";
import { switchableLeadership } from "../../support/leadership.js";
import { ev, spec, startHarness, type Harness } from "./harness.js";

let home: string;
let cleanup: () => Promise<void>;
let h: Harness;
let clock: FakeClock;

beforeEach(async () => {
  ({ home, cleanup } = await makeTempHome("svc-sentinel-expiry-"));
  clock = new FakeClock();
  h = await startHarness(home, { clock });
});
afterEach(async () => {
  await h.stop();
  await cleanup();
});

const ended = (x: Harness) => x.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "sentinel ended:expired");
const at = (ms: number) => ({ until: { kind: "at", ms: clock.now() + ms } });

async function expectExpired(x: Harness, id: string, reason: string, via: string) {
  const p = await x.engine.project(id);
  expect(p).toMatchObject({ status: "expired", endedReason: reason, endedAt: clock.now() });
  expect(ended(x)).toEqual([expect.objectContaining({ sentinel: id, reason, via, level: "info" })]);
  expect(x.daemonEvents.filter((e) => e.type === "sentinel:ended").map((e) => e.data)).toEqual([
    { sentinelId: id, status: "expired", reason, via },
  ]);
  expect(x.rec.hooks).toEqual(expect.arrayContaining([`expired:${id}`]));
}

describe("until: at, seen at each point first", () => {
  it("startup sweep: a sentinel whose time passed while the daemon was down expires at start", async () => {
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    await h.stop();
    clock.advance(1000);
    h = await startHarness(home, { clock });
    await expectExpired(h, p.id, "at", "startup");
    expect(h.rec.watched).not.toContain(p.id);
  });

  it("periodic tick", async () => {
    const p = await h.engine.create(spec("s", { ...at(1000), provider: "local-gh" }), "loopback");
    clock.advance(1000);
    h.ticker.fire();
    await h.engine.settled();
    await expectExpired(h, p.id, "at", "tick");
    expect(h.rec.hooks).toContain(`unwatch:${p.id}`);
  });

  it("push ingress: nothing is delivered and the push reports it expired", async () => {
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    clock.advance(1000);
    const r = await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    expect(r.matched).toEqual([{ sentinelId: p.id, eventId: "e1", outcome: "expired" }]);
    expect(h.rec.delivered).toEqual([]);
    await expectExpired(h, p.id, "at", "ingress");
  });

  it("poll ingress: active() leaves it out and expires it", async () => {
    const p = await h.engine.create(spec("s", { ...at(1000), provider: "local-gh" }), "loopback");
    expect(h.engine.active("local-gh").map((s) => s.id)).toEqual([p.id]);
    clock.advance(1000);
    expect(h.engine.active("local-gh")).toEqual([]);
    await h.engine.settled();
    await expectExpired(h, p.id, "at", "poll");
  });

  it("delivery dispatch: time passing during a batch stops the rest; isExpiredNow for deferred targets", async () => {
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    h.rec.onDeliver = () => clock.advance(1000);
    const r = await h.engine.ingest("agentpush", [ev("e1", ["s"]), ev("e2", ["s"])]);
    expect(r.matched.map((m) => m.outcome)).toEqual(["delivered", "expired"]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["e1"]);
    const lines = ended(h);
    expect(lines).toHaveLength(1);
    expect(lines[0].via).toBe("dispatch");
    expect(await h.engine.isExpiredNow(p.id)).toBe(true);
    expect(await h.engine.isExpiredNow("snt_missing")).toBe(true);
  });

  it("isExpiredNow (a target's dispatcher) is the first to see it", async () => {
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    expect(await h.engine.isExpiredNow(p.id)).toBe(false);
    clock.advance(1000);
    expect(await h.engine.isExpiredNow(p.id)).toBe(true);
    await expectExpired(h, p.id, "at", "dispatch");
    const r = await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    expect(r.matched).toEqual([]);
    expect(h.rec.delivered).toEqual([]);
  });

  it("expires once however many paths see it at the same time", async () => {
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    clock.advance(5000);
    h.ticker.fire();
    h.engine.active();
    await Promise.all([
      h.engine.isExpiredNow(p.id),
      h.engine.ingest("agentpush", [ev("e1", ["s"])]),
      h.engine.sweep("tick"),
    ]);
    await h.engine.settled();
    expect(ended(h)).toHaveLength(1);
    expect(h.rec.delivered).toEqual([]);
  });

  it("an expiry whose write fails leaves the sentinel matched, so the next event expires it", async () => {
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    const store = resolve(h.c, SENTINEL_STORE);
    const update = store.update.bind(store);
    store.update = async () => {
      throw new Error("disk full");
    };
    clock.advance(1000);
    await expect(h.engine.sweep("tick")).rejects.toThrow(/disk full/);
    expect((await h.engine.project(p.id)).status).toBe("active");
    store.update = update;
    const r = await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    expect(r.matched).toEqual([{ sentinelId: p.id, eventId: "e1", outcome: "expired" }]);
    expect(h.rec.delivered).toEqual([]);
    expect(await h.engine.project(p.id)).toMatchObject({ status: "expired", endedReason: "at" });
  });

  it("refuses an `at` in the past at creation", async () => {
    await expect(
      h.engine.create(spec("s", { until: { kind: "at", ms: clock.now() } }), "loopback"),
    ).rejects.toMatchObject({
      code: "invalid_input",
      details: [{ path: "until.ms", message: expect.stringContaining("in the past") }],
    });
  });
});

describe("until: count and subject_terminal", () => {
  it("count: ends after n deliveries; duplicates do not count; later events are not delivered", async () => {
    const p = await h.engine.create(spec("s", { until: { kind: "count", n: 2 } }), "loopback");
    await h.engine.ingest("agentpush", [ev("e1", ["s"]), ev("e1", ["s"])]);
    expect((await h.engine.project(p.id)).status).toBe("active");
    const r = await h.engine.ingest("agentpush", [ev("e2", ["s"]), ev("e3", ["s"])]);
    expect(r.matched.map((m) => m.outcome)).toEqual(["delivered", "expired"]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["e1", "e2"]);
    await expectExpired(h, p.id, "count", "dispatch");
    expect((await h.engine.project(p.id)).deliveredCount).toBe(2);
  });

  it("count: a batch longer than n delivers exactly n, though appends are pipelined", async () => {
    const p = await h.engine.create(spec("s", { until: { kind: "count", n: 3 } }), "loopback");
    const r = await h.engine.ingest(
      "agentpush",
      Array.from({ length: 8 }, (_, i) => ev(`e${i}`, ["s"])),
    );
    expect(r.matched.map((m) => m.outcome)).toEqual([
      "delivered",
      "delivered",
      "delivered",
      ...Array(5).fill("expired"),
    ]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["e0", "e1", "e2"]);
    await expectExpired(h, p.id, "count", "dispatch");
    expect((await h.engine.project(p.id)).deliveredCount).toBe(3);
  });

  it("a sweep loads the dedup files of count sentinels only (no other until needs the delivered count)", async () => {
    await h.engine.create(spec("s"), "loopback");
    const count = await h.engine.create(spec("s", { until: { kind: "count", n: 2 } }), "loopback");
    await h.engine.create(spec("s", at(1000)), "loopback");
    // A fresh daemon life, whose startup sweep is the first to load anything.
    await h.stop();
    const load = SentinelDedup.prototype.load;
    const loaded: string[] = [];
    SentinelDedup.prototype.load = function (this: SentinelDedup, id: string) {
      loaded.push(id);
      return load.call(this, id);
    };
    try {
      h = await startHarness(home, { clock });
      expect(await h.engine.sweep("tick")).toEqual([]);
    } finally {
      SentinelDedup.prototype.load = load;
    }
    expect(loaded).toEqual([count.id]);
  });

  it("count survives a restart (the count lives in the dedup file, not sentinels.json)", async () => {
    const p = await h.engine.create(spec("s", { until: { kind: "count", n: 2 } }), "loopback");
    const before = await readFile(join(home, "sentinels.json"), "utf8");
    await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    expect(await readFile(join(home, "sentinels.json"), "utf8")).toBe(before);
    await h.stop();
    h = await startHarness(home, { clock });
    await h.engine.ingest("agentpush", [ev("e2", ["s"]), ev("e3", ["s"])]);
    expect(h.rec.delivered.map((d) => d.event.id)).toEqual(["e2"]);
    expect((await h.engine.project(p.id)).status).toBe("expired");
  });

  it("subject_terminal from the provider's terminalSubjects: the closing event is delivered, then watching ends", async () => {
    const pr = "github:acme/api#9";
    const p = await h.engine.create(
      spec(pr, { provider: "local-gh", until: { kind: "subject_terminal" } }),
      "loopback",
    );
    const other = await h.engine.create(
      spec("github:acme/api#10", { provider: "local-gh", until: { kind: "subject_terminal" } }),
      "loopback",
    );
    const r = await h.engine.ingest("local-gh", [
      ev("e1", ["github:acme/api", pr], "github.pull_request.closed"),
      ev("e2", ["github:acme/api", pr], "github.review.submitted"),
    ]);
    expect(r.matched.map((m) => m.outcome)).toEqual(["delivered", "expired"]);
    await expectExpired(h, p.id, "subject_terminal", "terminal");
    expect(h.rec.hooks).toContain(`unwatch:${p.id}`);
    expect((await h.engine.project(other.id)).status).toBe("active");
  });

  it("subject_terminal also ends a sentinel whose types did not match the terminal event", async () => {
    const pr = "github:acme/api#9";
    const p = await h.engine.create(
      spec(pr, {
        provider: "local-gh",
        match: [{ subject: pr, types: ["github.review.*"] }],
        until: { kind: "subject_terminal" },
      }),
      "loopback",
    );
    await h.engine.ingest("local-gh", [ev("e1", ["github:acme/api", pr], "github.pull_request.closed")]);
    expect(h.rec.delivered).toEqual([]);
    expect((await h.engine.project(p.id)).status).toBe("expired");
  });

  it("subject_terminal through the ingress (provider reports it); other until kinds ignore it", async () => {
    const p = await h.engine.create(spec("job:1", { until: { kind: "subject_terminal" } }), "loopback");
    const never = await h.engine.create(spec("job:1"), "loopback");
    await h.engine.subjectTerminal("agentpush", "job:1");
    expect((await h.engine.project(p.id)).status).toBe("expired");
    expect((await h.engine.project(never.id)).status).toBe("active");
    await h.engine.ingest("agentpush", [ev("e1", ["job:1"])]);
    expect(h.rec.delivered.map((d) => d.sentinelId)).toEqual([never.id]);
  });

  it("an expired sentinel stays expired and listed after a restart and is never re-watched", async () => {
    const p = await h.engine.create(spec("s", { until: { kind: "count", n: 1 }, provider: "local-gh" }), "loopback");
    await h.engine.ingest("local-gh", [ev("e1", ["s"], "github.x")]);
    await h.stop();
    h = await startHarness(home, { clock });
    expect(h.rec.watched).toEqual([]);
    expect((await h.engine.list()).map((s) => [s.id, s.status])).toEqual([[p.id, "expired"]]);
  });

  it("a corrupt dedup file is treated as empty, not as a crash", async () => {
    const p = await h.engine.create(spec("s"), "loopback");
    await h.engine.ingest("agentpush", [ev("e1", ["s"])]);
    await h.stop();
    await writeFile(join(home, "sentinels-dedup", `${p.id}.json`), "{torn");
    await writeFile(join(home, "sentinels-dedup", `${p.id}.log`), 'not json\n{"q":');
    h = await startHarness(home, { clock });
    expect((await h.engine.project(p.id)).status).toBe("active");
  });
});

describe("in a team (several daemons on one store)", () => {
  it("the periodic tick sweeps only on the holder of the lease team:expiry-sweep", async () => {
    await h.stop();
    const roles = switchableLeadership();
    h = await startHarness(home, {
      clock,
      before: (c) => resolve(c, SERVICES).provide("leadership", roles.leadership),
    });
    expect(roles.asked).toEqual(["team:expiry-sweep"]);
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    clock.advance(1000);
    h.ticker.fire();
    await h.engine.settled();
    expect(ended(h)).toEqual([]);
    roles.holding = true;
    h.ticker.fire();
    await h.engine.settled();
    await expectExpired(h, p.id, "at", "tick");
    await h.stop();
    expect(roles.released).toEqual(["team:expiry-sweep"]);
    h = await startHarness(home, { clock });
  });

  it("a sentinel another daemon expired meanwhile is not expired, announced or told twice", async () => {
    const p = await h.engine.create(spec("s", at(1000)), "loopback");
    const other = await startHarness(home, { clock });
    try {
      clock.advance(1000);
      await h.engine.sweep("tick");
      clock.advance(5);
      // `other` still has it active in memory; the store holds h's end.
      expect(await other.engine.sweep("tick")).toEqual([]);
      expect(ended(other)).toEqual([]);
      expect(other.daemonEvents.filter((e) => e.type === "sentinel:ended")).toEqual([]);
      expect(other.rec.hooks).not.toContain(`expired:${p.id}`);
      const stored = (await readFile(join(home, "sentinels.json"), "utf8")).toString();
      expect(JSON.parse(stored).sentinels[0]).toMatchObject({ status: "expired", endedAt: clock.now() - 5 });
    } finally {
      await other.stop();
    }
  });
});
