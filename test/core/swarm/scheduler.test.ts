/** The scheduler's rules, with a runner whose turns the test ends one by one. */
import { describe, expect, it } from "vitest";
import { runSchedule, type TurnOutcome } from "../../../core/swarm/scheduler.js";
import type { PlannedStep, RunPlan } from "../../../core/swarm/plan.js";
import type { StepRecord } from "../../../core/swarm/records.js";

const step = (id: string, needs: string[] = [], extra: Partial<PlannedStep> = {}): PlannedStep => ({
  id,
  label: id,
  prompt: `p ${id}${needs.map((n) => ` \${{ steps.${n}.output }}`).join("")}`,
  needs,
  model: { ref: "m" },
  adapter: { slug: "echo" },
  cwd: "/",
  options: {},
  ...extra,
});
const plan = (steps: PlannedStep[], concurrency: number): RunPlan => ({
  name: "t",
  baseDir: "/",
  concurrency,
  order: steps.map((s) => s.id),
  steps,
  models: { run: {} },
  loadReport: [],
});

/** A runner whose turns stay open until the test settles them. */
function heldRunner() {
  const open = new Map<string, { prompt: string; settle(o: TurnOutcome): void }>();
  let most = 0;
  const runner = (s: PlannedStep, prompt: string) =>
    new Promise<TurnOutcome>((resolve) => {
      open.set(s.id, { prompt, settle: (o) => (open.delete(s.id), resolve(o)) });
      most = Math.max(most, open.size);
    });
  return { runner, open, most: () => most };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("runSchedule", () => {
  it("never runs more than `concurrency` steps at once, and starts a step only after its needs, with their outputs", async () => {
    const steps = [...Array.from({ length: 6 }, (_, i) => step(`s${i}`)), step("join", ["s0", "s5"])];
    const h = heldRunner();
    const changes: Array<[string, StepRecord["state"]]> = [];
    const prompts = new Map<string, string>();
    let finished = false;
    const done = runSchedule(plan(steps, 2), h.runner, {
      concurrency: 2,
      signal: new AbortController().signal,
      now: () => 0,
      onChange: (id, r) => changes.push([id, r.state]),
    }).finally(() => (finished = true));
    while (!finished) {
      await tick();
      const [id, turn] = [...h.open.entries()][0] ?? [];
      if (id && turn) {
        prompts.set(id, turn.prompt);
        turn.settle({ stopReason: "end_turn", output: `out ${id}` });
      }
    }
    const recs = await done;
    expect(prompts.get("join")).toBe("p join out s0 out s5");
    expect(h.most()).toBe(2);
    expect(Object.values(recs).every((r) => r.state === "succeeded")).toBe(true);
    expect(changes.findIndex(([id, st]) => id === "join" && st === "running")).toBeGreaterThan(
      changes.findIndex(([id, st]) => id === "s5" && st === "succeeded"),
    );
  });

  it("a step with a plan problem fails without running; its dependents are skipped, the rest run", async () => {
    const h = heldRunner();
    const steps = [step("bad", [], { problem: "no adapter fits model" }), step("dep", ["bad"]), step("ok")];
    const done = runSchedule(plan(steps, 4), h.runner, {
      concurrency: 4,
      signal: new AbortController().signal,
      now: () => 0,
      onChange: () => undefined,
    });
    await tick();
    expect([...h.open.keys()]).toEqual(["ok"]);
    h.open.get("ok")!.settle({ stopReason: "end_turn", output: "fine" });
    const recs = await done;
    expect(recs.bad).toMatchObject({ state: "failed", error: "no adapter fits model" });
    expect(recs.dep).toEqual({ state: "skipped", reason: "needs bad, which failed" });
    expect(recs.ok).toMatchObject({ state: "succeeded", output: "fine" });
  });

  it("cancel: running steps end as cancelled, the rest are cancelled before they start", async () => {
    const h = heldRunner();
    const abort = new AbortController();
    const done = runSchedule(plan([step("a"), step("b", ["a"])], 1), h.runner, {
      concurrency: 1,
      signal: abort.signal,
      now: () => 0,
      onChange: () => undefined,
    });
    await tick();
    abort.abort();
    await tick();
    h.open.get("a")!.settle({ stopReason: "cancelled", output: "", error: "stopped" });
    const recs = await done;
    expect(recs.a).toMatchObject({ state: "cancelled", reason: "the run was cancelled" });
    expect(recs.b).toEqual({ state: "cancelled", reason: "the run was cancelled before it started" });
  });
});
