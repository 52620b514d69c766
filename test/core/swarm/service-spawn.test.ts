/**
 * What a run's steps are spawned with: a run started by a session is bounded by that session's
 * delegation, as a spawn it made would be (run-swarm is not a way around `delegation: 0` or
 * `defaults.maxGrantableDelegation`); the run's `worktreeRoot` (`run-swarm --root`) places the
 * steps' worktrees.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunRecord, RunStore } from "../../../core/swarm/records.js";
import { SwarmService } from "../../../core/swarm/service.js";
import { CLOCK, CONFIG, DAEMON_EVENTS, ENV, HOME, LOGGER, RANDOM, SLEEP, resolve } from "../../../core/tokens.js";
import { fixtureAgent } from "../sessions/harness.js";
import { AGENTS, makeRepo, makeWsHarness, tempDir, type WsHarness } from "../workspaces/support.js";

let h: WsHarness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

function swarmService(w: WsHarness): SwarmService {
  const c = w.c;
  return new SwarmService({
    container: c,
    sessions: w.runtime,
    config: resolve(c, CONFIG),
    clock: resolve(c, CLOCK),
    random: resolve(c, RANDOM),
    sleep: resolve(c, SLEEP),
    logger: resolve(c, LOGGER),
    events: resolve(c, DAEMON_EVENTS),
    home: resolve(c, HOME),
    env: resolve(c, ENV),
  });
}

describe("run-swarm under the caller's delegation", () => {
  it("a session with delegation 0 may not start a run; another's steps get at most one less than it, capped by maxGrantableDelegation", async () => {
    h = await makeWsHarness({
      defaults: { maxGrantableDelegation: 1 },
      acpAgents: { ...AGENTS, echo: fixtureAgent("echo-agent.mjs", { models: { allowed: ["fx-echo"] } }) },
    });
    const cwd = await tempDir();
    const service = swarmService(h);
    const input = {
      swarm: {
        schema: "svc/swarm/v1",
        name: "d",
        steps: [{ id: "a", model: "fx-echo", adapter: "echo", prompt: "hi" }],
      },
      baseDir: cwd,
    };
    const spent = await h.runtime.start({ adapter: "echo", cwd, delegation: 0 });
    const spentToken = h.runtime.workspaces.tokens.issue(spent.descriptor.id, "cd".repeat(24));
    await expect(service.start(input, { callerToken: spentToken })).rejects.toMatchObject({
      code: "forbidden",
      message: expect.stringContaining(spent.descriptor.id),
    });

    const free = await h.runtime.start({ adapter: "echo", cwd });
    const out = await service.start(input, {
      callerToken: h.runtime.workspaces.tokens.issue(free.descriptor.id, "ef".repeat(24)),
    });
    const run = await service.wait(out.run!.runId);
    expect(run.steps.a).toMatchObject({ state: "succeeded" });
    expect(h.runtime.get(run.steps.a!.sessionId!).fixed.delegation).toBe(1);
    await service.stopAll();
  });

  it("worktreeRoot (run-swarm --root) is where the steps' worktrees are made", async () => {
    h = await makeWsHarness({
      acpAgents: { ...AGENTS, echo: fixtureAgent("echo-agent.mjs", { models: { allowed: ["fx-echo"] } }) },
    });
    const dir = await tempDir();
    const repo = await makeRepo(dir);
    const service = swarmService(h);
    const root = join(dir, "elsewhere");
    const out = await service.start({
      swarm: {
        schema: "svc/swarm/v1",
        name: "r",
        steps: [{ id: "a", model: "fx-echo", adapter: "echo", worktree: "step-a", prompt: "hi" }],
      },
      baseDir: repo,
      worktreeRoot: root,
    });
    const run = await service.wait(out.run!.runId);
    expect(run.steps.a).toMatchObject({ state: "succeeded" });
    expect(h.runtime.get(run.steps.a!.sessionId!).fixed.worktree?.path).toBe(join(root, "app", "step-a"));
    await service.stopAll();
  });
});

describe("a run's end as readers see it", () => {
  it("get answers the final state only once run.json holds it (a reader never sees 'succeeded' ahead of the disk)", async () => {
    h = await makeWsHarness({
      acpAgents: { ...AGENTS, echo: fixtureAgent("echo-agent.mjs", { models: { allowed: ["fx-echo"] } }) },
    });
    const cwd = await tempDir();
    const service = swarmService(h);
    const store = (service as unknown as { store: RunStore }).store;
    const save = store.save.bind(store);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let finalSaveStarted!: () => void;
    const finalSave = new Promise<void>((r) => (finalSaveStarted = r));
    store.save = (rec: RunRecord) => {
      if (rec.state === "running") return save(rec);
      finalSaveStarted();
      return held.then(() => save(rec));
    };
    const out = await service.start({
      swarm: {
        schema: "svc/swarm/v1",
        name: "e",
        steps: [{ id: "a", model: "fx-echo", adapter: "echo", prompt: "hi" }],
      },
      baseDir: cwd,
    });
    const runId = out.run!.runId;
    await finalSave;
    expect((await service.get(runId)).state).toBe("running");
    expect((await service.list())[0]).toMatchObject({ runId, state: "running" });
    release();
    const run = await service.wait(runId);
    expect(run.state).toBe("succeeded");
    expect(JSON.parse(await readFile(join(store.dir(runId), "run.json"), "utf8"))).toMatchObject({
      state: "succeeded",
      steps: { a: { state: "succeeded" } },
    });
    await service.stopAll();
  });
});
