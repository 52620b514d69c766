import { describe, expect, it } from "vitest";
import { oneLoadAtATime } from "../../../../core/dashboard/web/one-load-at-a-time.js";

/** A reload whose answers the test releases by hand, in any order. */
function gatedLoads() {
  const started: Array<{ n: number; release: (fail?: boolean) => void }> = [];
  let running = 0;
  let most = 0;
  const run = () =>
    new Promise<void>((resolve, reject) => {
      running++;
      most = Math.max(most, running);
      started.push({
        n: started.length + 1,
        release: (fail) => {
          running--;
          if (fail) reject(new Error("the daemon answered 503"));
          else resolve();
        },
      });
    });
  return { run, started, most: () => most };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("oneLoadAtATime", () => {
  it("never runs two reloads side by side, and runs one more after calls made meanwhile", async () => {
    const g = gatedLoads();
    const load = oneLoadAtATime(g.run);
    const first = load();
    const second = load();
    const third = load();
    expect(g.started.length).toBe(1);
    g.started[0]!.release();
    await first;
    await tick();
    // The two calls made during the first reload share one reload that started after it.
    expect(g.started.length).toBe(2);
    g.started[1]!.release();
    await Promise.all([second, third]);
    expect(g.most()).toBe(1);
    expect(g.started.length).toBe(2);
  });

  it("starts at once when idle, and keeps going after a reload that failed", async () => {
    const g = gatedLoads();
    const load = oneLoadAtATime(g.run);
    const failed = load();
    const after = load();
    g.started[0]!.release(true);
    await expect(failed).rejects.toThrow("503");
    await tick();
    g.started[1]!.release();
    await expect(after).resolves.toBeUndefined();
    const idle = load();
    expect(g.started.length).toBe(3);
    g.started[2]!.release();
    await idle;
  });

  it("does not wait forever behind a reload that was never answered", async () => {
    const g = gatedLoads();
    let clock = 0;
    const load = oneLoadAtATime(g.run, { patienceMs: 30_000, now: () => clock });
    void load();
    clock = 29_999;
    void load();
    expect(g.started.length).toBe(1);
    clock = 30_000;
    const fresh = load();
    expect(g.started.length).toBe(2);
    // A call during the fresh reload gets one more after it, not the stuck queue of the first.
    const after = load();
    g.started[1]!.release();
    await fresh;
    await tick();
    expect(g.started.length).toBe(3);
    g.started[2]!.release();
    await after;
  });
});
