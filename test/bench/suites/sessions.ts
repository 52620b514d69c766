/**
 * Agent sessions: start-to-first-update latency with the fixture ACP agent (beside spawning
 * `node -e 0`), and the daemon's RSS with 50 live ACP sessions (beside the same daemon idle).
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, median, timeNode } from "../measure.js";

const N = Number(process.env.BENCH_RUNS ?? 15);
const LIVE = 50;
const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");
const AGENT = join(REPO_ROOT, "test/fixtures/acp-agents/echo-agent.mjs");

export interface Daemon {
  pid: number;
  base: string;
  token: string;
  stop(): Promise<void>;
}

export async function startDaemon(home: string): Promise<Daemon> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
    env: { ...process.env, SVC_HOME: home, SVC_LOG_LEVEL: "warn" },
    stdio: "ignore",
  });
  const deadline = Date.now() + 20_000;
  for (;;) {
    const info = await readFile(join(home, "runtime.json"), "utf8").then(JSON.parse, () => undefined);
    if (info?.pid === child.pid) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      return {
        pid: child.pid!,
        base: `http://127.0.0.1:${info.port}`,
        token: info.token,
        stop: async () => (child.kill("SIGTERM"), exited),
      };
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("the daemon did not start");
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function call<T>(d: Daemon, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(d.base + path, {
    method,
    headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

/** Daemon-side start-to-first-update: from the transcript's `session.starting` line to its first `update`. */
export async function firstUpdateMs(d: Daemon, cwd: string): Promise<number> {
  const { descriptor } = await call<{ descriptor: { id: string } }>(d, "POST", "/sessions", {
    adapter: "echo",
    cwd,
    prompt: "bench",
    wait: true,
  });
  const exp = await call<{ events: Array<{ type: string; at: number }> }>(
    d,
    "GET",
    `/sessions/${descriptor.id}/export`,
  );
  await call(d, "POST", `/sessions/${descriptor.id}/stop`);
  const start = exp.events.find((e) => e.type === "session.starting")!.at;
  return exp.events.find((e) => e.type === "update")!.at - start;
}

export const sessions: BenchSuite = {
  name: "sessions",
  async run(): Promise<BenchLine[]> {
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-sessions-"));
    await writeFile(
      join(dir, "config.json"),
      JSON.stringify({ acpAgents: { echo: { bin: process.execPath, bin_args: [AGENT] } } }),
    );
    const d = await startDaemon(dir);
    try {
      await new Promise((r) => setTimeout(r, 500));
      const idle = await rssKiB(d.pid);
      await firstUpdateMs(d, dir);
      const latencies: number[] = [];
      for (let i = 0; i < N; i++) latencies.push(await firstUpdateMs(d, dir));
      const spawnBase = timeNode(["-e", "0"], { n: N });
      const ids: string[] = [];
      for (let i = 0; i < LIVE; i++) {
        const { descriptor } = await call<{ descriptor: { id: string } }>(d, "POST", "/sessions", {
          adapter: "echo",
          cwd: dir,
          prompt: `hello ${i}`,
          wait: true,
        });
        ids.push(descriptor.id);
      }
      const loaded = await rssKiB(d.pid);
      for (const id of ids) await call(d, "POST", `/sessions/${id}/stop`);
      return [
        {
          name: "ACP session start to first update (fixture agent)",
          value: median(latencies),
          unit: "ms",
          baseline: { name: "spawn node -e 0", value: spawnBase.medianMs },
          note: `median of ${N}; daemon-side, from the transcript: spawn, initialize, session/new, prompt, first chunk`,
        },
        {
          name: `daemon RSS with ${LIVE} live ACP sessions`,
          value: loaded / 1024,
          unit: "MiB",
          baseline: { name: "the same daemon idle, freshly started", value: idle / 1024 },
          note: "the agents are separate processes and not counted",
        },
      ];
    } finally {
      await d.stop();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
