import { getHeapStatistics } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { fullCollection, IdleCollector, type IdleCollectorProbe } from "../../../core/runtime/idle-collector.js";

const MiB = 2 ** 20;

/**
 * A process whose heap and event loop the test sets: a collection brings the committed heap down to
 * `shrinksTo` (what V8 gives back that time) and the used heap to `live`.
 */
class Probe implements IdleCollectorProbe {
  committed = 100 * MiB;
  used = 40 * MiB;
  live = 30 * MiB;
  shrinksTo = 33 * MiB;
  busy = 0;
  heap = () => ({ committed: this.committed, used: this.used });
  utilization = () => this.busy;
  collect = () => void ((this.committed = this.shrinksTo), (this.used = this.live));
}

const options = { idleUtilization: 0.02, slackBytes: 8 * MiB, maxCollections: 3 };

describe("IdleCollector", () => {
  it("collects once the event loop is idle, never while it is busy", () => {
    const probe = new Probe();
    const collector = new IdleCollector(probe, options);
    probe.busy = 0.4;
    expect(collector.check()).toBeUndefined();
    expect(probe.committed).toBe(100 * MiB);
    probe.busy = 0.01;
    expect(collector.check()).toEqual({ before: 100 * MiB, after: 33 * MiB });
    expect(collector.collections).toBe(1);
  });

  it("does nothing while idle near its data, and collects again after the heap grew in a burst", () => {
    const probe = new Probe();
    const collector = new IdleCollector(probe, options);
    collector.check();
    for (let i = 0; i < 10; i++) expect(collector.check()).toBeUndefined();
    probe.busy = 0.9;
    probe.committed = 90 * MiB;
    probe.used = 60 * MiB;
    expect(collector.check()).toBeUndefined();
    probe.busy = 0;
    expect(collector.check()).toEqual({ before: 90 * MiB, after: 33 * MiB });
    expect(collector.collections).toBe(2);
  });

  it("tries again when a collection gave nothing back, at most maxCollections times per burst", () => {
    const probe = new Probe();
    probe.shrinksTo = 100 * MiB;
    const collector = new IdleCollector(probe, options);
    for (let i = 0; i < 10; i++) collector.check();
    expect(collector.collections).toBe(3);
    probe.shrinksTo = 33 * MiB;
    probe.committed = 120 * MiB;
    expect(collector.check()).toEqual({ before: 120 * MiB, after: 33 * MiB });
    expect(collector.collections).toBe(4);
  });
});

describe("fullCollection", () => {
  it("collects garbage without --expose-gc, and leaves no gc global in this or later contexts", () => {
    const collect = fullCollection();
    expect(fullCollection()).toBe(collect);
    let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `x${i}` }));
    const held = getHeapStatistics().used_heap_size;
    expect(garbage.length).toBe(200_000);
    garbage = undefined;
    collect();
    expect(getHeapStatistics().used_heap_size).toBeLessThan(held - 8 * MiB);
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe("undefined");
    expect(runInNewContext("typeof gc")).toBe("undefined");
  });
});
