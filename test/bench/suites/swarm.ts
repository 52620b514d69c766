/**
 * run-swarm: the run's overhead per step (a one-step run's wall time, adapter walk included,
 * beside `POST /sessions` with wait; and spawn-to-first-update inside a run beside a session
 * started alone), and a 20-step fan-out at concurrency 4 beside the same 20 steps one at a time.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, median } from "../measure.js";
import { call, firstUpdateMs, startDaemon, type Daemon } from "./sessions.js";

const N = Number(process.env.BENCH_RUNS ?? 15);
const FAN = 20;
const AGENT = join(REPO_ROOT, "test/fixtures/acp-agents/echo-agent.mjs");

interface Run {
  runId: string;
  state: string;
  steps: Record<string, { sessionId?: string }>;
}

async function runSwarm(
  d: Daemon,
  dir: string,
  steps: unknown[],
  concurrency?: number,
): Promise<{ ms: number; run: Run }> {
  const t0 = performance.now();
  const { run } = await call<{ run: Run }>(d, "POST", "/swarm/runs", {
    swarm: { schema: "svc/swarm/v1", steps },
    baseDir: dir,
    ...(concurrency ? { concurrency } : {}),
  });
  for (;;) {
    const got = (await call<{ run: Run }>(d, "GET", `/swarm/runs/${run.runId}`)).run;
    if (got.state !== "running") {
      if (got.state !== "succeeded") throw new Error(`run ${run.runId} ${got.state}`);
      return { ms: performance.now() - t0, run: got };
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function sessionWallMs(d: Daemon, dir: string): Promise<number> {
  const t0 = performance.now();
  const { descriptor } = await call<{ descriptor: { id: string } }>(d, "POST", "/sessions", {
    adapter: "echo",
    cwd: dir,
    prompt: "bench",
    wait: true,
  });
  await call(d, "POST", `/sessions/${descriptor.id}/stop`);
  return performance.now() - t0;
}

async function firstUpdateOf(d: Daemon, sessionId: string): Promise<number> {
  const exp = await call<{ events: Array<{ type: string; at: number }> }>(d, "GET", `/sessions/${sessionId}/export`);
  return exp.events.find((e) => e.type === "update")!.at - exp.events.find((e) => e.type === "session.starting")!.at;
}

const step = (id: string) => ({ id, model: "m", adapter: "echo", prompt: `bench ${id}` });

export const swarm: BenchSuite = {
  name: "swarm",
  async run(): Promise<BenchLine[]> {
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-swarm-"));
    await writeFile(
      join(dir, "config.json"),
      JSON.stringify({ acpAgents: { echo: { bin: process.execPath, bin_args: [AGENT] } } }),
    );
    const d = await startDaemon(dir);
    try {
      await runSwarm(d, dir, [step("warm")]);
      await sessionWallMs(d, dir);
      const runWall: number[] = [];
      const runFirst: number[] = [];
      const aloneWall: number[] = [];
      const aloneFirst: number[] = [];
      for (let i = 0; i < N; i++) {
        const { ms, run } = await runSwarm(d, dir, [step("one")]);
        runWall.push(ms);
        runFirst.push(await firstUpdateOf(d, run.steps.one!.sessionId!));
        aloneWall.push(await sessionWallMs(d, dir));
        aloneFirst.push(await firstUpdateMs(d, dir));
      }
      const fan = Array.from({ length: FAN }, (_, i) => step(`s${i + 1}`));
      const par: number[] = [];
      const seq: number[] = [];
      for (let i = 0; i < 3; i++) {
        par.push((await runSwarm(d, dir, fan, 4)).ms);
        seq.push((await runSwarm(d, dir, fan, 1)).ms);
      }
      return [
        {
          name: "one-step run, POST to run ended (adapter walk, plan, record, session, turn, stop)",
          value: median(runWall),
          unit: "ms",
          baseline: { name: "POST /sessions with wait, then stop", value: median(aloneWall) },
          note: `median of ${N}; the difference is the run's overhead per step (includes polling the run every 5 ms)`,
        },
        {
          name: "spawn to first update, a step inside a run",
          value: median(runFirst),
          unit: "ms",
          baseline: { name: "the same for a session started alone", value: median(aloneFirst) },
          note: "daemon-side, from the transcript: the same spawn path, so the ratio should be ~1",
        },
        {
          name: `${FAN}-step fan-out at --concurrency 4`,
          value: median(par),
          unit: "ms",
          baseline: { name: `the same ${FAN} steps at --concurrency 1`, value: median(seq) },
          targetRatio: 0.5,
          note: "median of 3; each step spawns a node agent, so the cores of the machine bound the speed-up",
        },
      ];
    } finally {
      await d.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
