/**
 * The daemon's memory beside a bare `node` process measured in the same run: RSS with 100 webhook
 * sentinels stored, when /health first answers, after 15 s and after 30 s idle (target at 15 s:
 * at most 1.5x the bare process). Each run starts the daemon and a bare process together (which
 * one is spawned first alternates run by run), so load from elsewhere hits both alike; the figure
 * is the median over the runs (BENCH_RUNS, default 5).
 *
 * The helpers are exported for further sections of this suite (memory over time under load):
 * spawn with {@link startMemoryDaemon} / {@link startBareNode}, read RSS with {@link rssMiB}, and
 * sample both at the same moments with {@link sampleAt}.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchLine, BenchSuite } from "../types.js";
import { writeBenchSentinels } from "../daemon.js";
import { REPO_ROOT, median } from "../measure.js";

const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Seconds after spawn at which the idle figures are taken (the first sample is when /health answers). */
export const IDLE_SAMPLES_S = [15, 30] as const;
export const IDLE_SENTINELS = 100;

/** A process whose RSS is measured. */
export interface Measured {
  pid: number;
  /** When it was spawned (performance.now()). */
  spawnedAt: number;
  stop(): Promise<void>;
}

export interface MemoryDaemon extends Measured {
  base: string;
  token: string;
}

/** Resident set size of `pid` in MiB, from /proc (Linux). */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kib = /VmRSS:\s+(\d+)/.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kib) / 1024;
}

function stopper(child: ChildProcess): () => Promise<void> {
  const exited = new Promise<void>((r) => (child.exitCode !== null ? r() : child.once("exit", () => r())));
  return async () => {
    child.kill("SIGTERM");
    await exited;
  };
}

/** A bare `node` process that only keeps its event loop alive: the baseline. */
export function startBareNode(): Measured {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1e9)"], { stdio: "ignore" });
  return { pid: child.pid!, spawnedAt, stop: stopper(child) };
}

/**
 * `svc serve --port 0` on `home` (write its sentinels first, e.g. with {@link writeIdleSentinels});
 * resolves once GET /health answers 200.
 */
export async function startMemoryDaemon(home: string, env: NodeJS.ProcessEnv = {}): Promise<MemoryDaemon> {
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
    env: { ...process.env, SVC_HOME: home, SVC_LOG_LEVEL: "warn", ...env },
    stdio: "ignore",
  });
  const stop = stopper(child);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the daemon exited ${child.exitCode} before /health answered`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error("the daemon did not answer /health within 60 s");
    }
    const info = await readFile(join(home, "runtime.json"), "utf8").then(JSON.parse, () => undefined);
    if (info?.pid === child.pid) {
      const base = `http://127.0.0.1:${info.port}`;
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return { pid: child.pid!, spawnedAt, base, token: info.token, stop };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** `n` active sentinels with webhook targets (never delivered to: nothing is pushed). */
export function writeIdleSentinels(home: string, n = IDLE_SENTINELS): Promise<void> {
  return writeBenchSentinels(home, n, (i) => ({
    kind: "webhook",
    url: `https://127.0.0.1:9/hook/${i}`,
    secret: `whsec_${Buffer.alloc(32, 7).toString("base64")}`,
  }));
}

/** Waits until `seconds` after `since` (performance.now()), then reads the RSS of each process. */
export async function sampleAt(since: number, seconds: number, procs: readonly Measured[]): Promise<number[]> {
  const wait = since + seconds * 1000 - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  return Promise.all(procs.map((p) => rssMiB(p.pid)));
}

/** One idle run: RSS of the daemon and of a bare node at start (/health), then at each of `at` seconds. */
export interface IdleRun {
  /** [daemon, bare] in MiB, at start then at each of IDLE_SAMPLES_S. */
  samples: Array<[number, number]>;
}

export async function idleRun(spawnBareFirst: boolean, at: readonly number[] = IDLE_SAMPLES_S): Promise<IdleRun> {
  const home = await mkdtemp(join(tmpdir(), "svc-bench-mem-"));
  let bare: Measured | undefined;
  let daemon: MemoryDaemon | undefined;
  try {
    await writeIdleSentinels(home);
    if (spawnBareFirst) bare = startBareNode();
    const starting = startMemoryDaemon(home);
    if (!spawnBareFirst) bare = startBareNode();
    daemon = await starting;
    const procs = [daemon, bare!];
    const samples: Array<[number, number]> = [(await sampleAt(daemon.spawnedAt, 0, procs)) as [number, number]];
    for (const s of at) samples.push((await sampleAt(daemon.spawnedAt, s, procs)) as [number, number]);
    return { samples };
  } finally {
    await Promise.all([daemon?.stop(), bare?.stop()]);
    await rm(home, { recursive: true, force: true });
  }
}

function range(values: number[]): string {
  return `${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)}`;
}

/** The idle lines: one per sample point, medians over `runs` runs. */
export async function idleLines(runs = RUNS): Promise<BenchLine[]> {
  const all: IdleRun[] = [];
  for (let i = 0; i < runs; i++) all.push(await idleRun(i % 2 === 1));
  const labels = ["when /health first answers", ...IDLE_SAMPLES_S.map((s) => `${s} s after start, idle`)];
  return labels.map((label, k) => {
    const daemon = all.map((r) => r.samples[k]![0]);
    const bare = all.map((r) => r.samples[k]![1]);
    const ratios = all.map((r) => r.samples[k]![0] / r.samples[k]![1]);
    return {
      name: `daemon RSS, ${IDLE_SENTINELS} webhook sentinels, ${label}`,
      value: median(daemon),
      unit: "MiB",
      baseline: { name: "bare node", value: median(bare) },
      ...(label.startsWith("15 s") ? { targetRatio: 1.5 } : {}),
      note: `median of ${runs} runs (daemon ${range(daemon)} MiB, bare ${range(bare)} MiB, ratios ${range(ratios)}x)`,
    };
  });
}

export const memory: BenchSuite = {
  name: "memory",
  async run(): Promise<BenchLine[]> {
    return idleLines();
  },
};
