import { describe, expect, it } from "vitest";
import { provisionCapFor } from "../../../core/config/local-paths.js";
import type { EffectiveConfig } from "../../../core/config/config-service.js";
import { capFor, ProvisionQueue, type QueueCaps } from "../../../core/workspaces/provision-queue.js";
import { FakeLoad } from "./support.js";

/** A job the test finishes (or fails) by hand. */
function gate() {
  let open!: () => void;
  let fail!: (e: Error) => void;
  const p = new Promise<void>((res, rej) => ((open = res), (fail = rej)));
  return { run: () => p, open, fail };
}

const tick = () => new Promise((r) => setImmediate(r));

/** Caps as the daemon builds them from worktrees.provisionConcurrency and provisionConcurrencyByRepo. */
function caps(global: number, byRepo: Record<string, number>, loadFactor = 0): QueueCaps {
  const cfg = { worktrees: { provisionConcurrencyByRepo: byRepo } } as unknown as EffectiveConfig;
  return { global, repoCap: (repo) => provisionCapFor(cfg, repo), loadFactor };
}

function setup(caps: QueueCaps) {
  const load = new FakeLoad();
  const q = new ProvisionQueue(() => caps, load);
  return { q, load, caps };
}

describe("the provisioning queue", () => {
  it("admits in arrival order up to the global cap; the rest wait with 1-based positions that move up", async () => {
    const { q } = setup(caps(2, {}, 0));
    const jobs = [1, 2, 3, 4, 5].map((i) => ({ id: `s${i}`, g: gate() }));
    const done = jobs.map((j) => q.submit(j.id, "/r/app", j.g.run));
    expect(q.admitted).toEqual(["s1", "s2"]);
    expect(jobs.map((j) => q.view(j.id))).toEqual([
      { state: "running" },
      { state: "running" },
      { state: "queued", position: 1 },
      { state: "queued", position: 2 },
      { state: "queued", position: 3 },
    ]);
    jobs[1]!.g.open();
    await done[1];
    await tick();
    expect(q.admitted).toEqual(["s1", "s2", "s3"]);
    expect(q.view("s2")).toEqual({ state: "done" });
    expect(q.view("s5")).toEqual({ state: "queued", position: 2 });
    for (const j of jobs) j.g.open();
    await Promise.all(done);
    await tick();
    expect(q.admitted).toEqual(["s1", "s2", "s3", "s4", "s5"]);
  });

  it("a failing job frees its slot and holds nothing else up", async () => {
    const { q } = setup(caps(1, {}, 0));
    const a = gate();
    const b = gate();
    const pa = q.submit("a", "/r/app", a.run);
    const pb = q.submit("b", "/r/app", b.run);
    a.fail(new Error("boom"));
    await expect(pa).rejects.toThrow("boom");
    await tick();
    expect(q.view("a")).toEqual({ state: "failed" });
    expect(q.view("b")).toEqual({ state: "running" });
    b.open();
    await pb;
  });

  it("0 means no global cap", () => {
    const { q } = setup(caps(0, {}, 0));
    for (let i = 0; i < 6; i++) void q.submit(`s${i}`, "/r/app", gate().run);
    expect(q.stats).toEqual({ waiting: 0, running: 6 });
  });

  it("per-repo caps (a path wins over a bare directory name) tighten, never loosen, the global cap; a full repo lets others pass", () => {
    expect(capFor("/src/app", caps(2, { app: 5 }, 0))).toBe(2);
    expect(capFor("/src/app", caps(4, { "/src/app": 1 }, 0))).toBe(1);
    expect(capFor("/src/app", caps(0, { "/other/app": 1, web: 1 }, 0))).toBe(Infinity);
    expect(capFor("/src/app", caps(0, { app: 1, "/src/app": 3 }, 0))).toBe(3);
    const { q } = setup(caps(3, { app: 1 }, 0));
    for (const [id, repo] of [
      ["a1", "/src/app"],
      ["a2", "/src/app"],
      ["w1", "/src/web"],
      ["a3", "/src/app"],
    ] as const)
      void q.submit(id, repo, gate().run);
    expect(q.admitted).toEqual(["a1", "w1"]);
    expect(q.view("a2")).toEqual({ state: "queued", position: 1 });
    expect(q.view("a3")).toEqual({ state: "queued", position: 2 });
  });

  it("the load guard: no admission while load1 > cores x factor, unless nothing runs", () => {
    const { q, load } = setup(caps(0, {}, 1.5));
    load.coreCount = 2;
    load.value = 9;
    const first = gate();
    void q.submit("a", "/r/app", first.run);
    void q.submit("b", "/r/app", gate().run);
    expect(q.admitted).toEqual(["a"]);
    expect(q.view("b")).toEqual({ state: "queued", position: 1 });
    load.value = 3.1;
    q.pump();
    expect(q.admitted).toEqual(["a"]);
    load.value = 3;
    q.pump();
    expect(q.admitted).toEqual(["a", "b"]);
    q.stop();
  });

  it("caps are read at every admission (a change applies at the next one)", () => {
    const live = caps(1, {}, 0);
    const { q } = setup(live);
    for (const id of ["a", "b", "c"]) void q.submit(id, "/r/app", gate().run);
    expect(q.admitted).toEqual(["a"]);
    live.global = 3;
    q.pump();
    expect(q.admitted).toEqual(["a", "b", "c"]);
  });
});
