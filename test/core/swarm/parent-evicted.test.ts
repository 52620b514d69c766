/**
 * A run nested under a session whose steps outlive it: once the parent has ended and left the
 * daemon's memory (evicted among the oldest ended sessions), a step still to start fails with why,
 * and its dependents are skipped. The session runtime in process, the fixture agents as processes.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SwarmService } from "../../../core/swarm/service.js";
import { swarmDeps } from "../../../core/swarm/module.js";
import { makeHarness, type Harness } from "../sessions/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe("a run whose parent session was evicted", () => {
  it("fails the steps that start after it, naming the parent; their dependents are skipped", async () => {
    h = await makeHarness();
    const { c, runtime } = h;
    const service = new SwarmService(swarmDeps(c));
    const parent = (await runtime.start({ adapter: "echo", cwd: h.home })).descriptor.id;
    const swarm = {
      schema: "svc/swarm/v1",
      steps: [
        { id: "first", model: "m", adapter: "slow", prompt: "go" },
        { id: "second", model: "m", adapter: "echo", needs: ["first"], prompt: "after" },
        { id: "third", model: "m", adapter: "echo", needs: ["second"], prompt: "never" },
      ],
    };
    const { run } = await service.start({ swarm, baseDir: h.home, parentSessionId: parent });
    expect(run!.parentSessionId).toBe(parent);
    // While the first step runs (as the parent's child), the parent ends and is evicted.
    let first = "";
    for (let i = 0; i < 500 && !first; i++) {
      first = (await service.get(run!.runId)).steps.first!.sessionId ?? "";
      if (!first) await new Promise((r) => setTimeout(r, 10));
    }
    expect(runtime.describe(runtime.get(first)).parentId).toBe(parent);
    await runtime.stop(parent);
    (runtime as unknown as { sessions: Map<string, unknown> }).sessions.delete(parent);

    const done = await service.wait(run!.runId);
    expect(done.steps.first).toMatchObject({ state: "succeeded" });
    expect(done.steps.second).toMatchObject({ state: "failed", error: `parent session ${parent} does not exist` });
    expect(done.steps.third).toEqual({ state: "skipped", reason: "needs second, which failed" });
    expect(done.state).toBe("failed");
  });
});
