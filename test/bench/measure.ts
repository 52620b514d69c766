/** Timing helpers for bench suites: wall time of real child processes, median of N runs. */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The repository root (this file runs from dist/test/bench/). */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export interface SpawnTiming {
  medianMs: number;
  runs: number[];
}

type NodeRunOptions = { n?: number; warmup?: number; cwd?: string; env?: NodeJS.ProcessEnv };

/** Wall time of one `node <args>` run, in ms; a non-zero exit is an error. */
function timeOnce(args: string[], options: NodeRunOptions): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, {
    cwd: options.cwd,
    env: options.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0)
    throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr.toString().slice(0, 500)}`);
  return ms;
}

/**
 * Runs `node <args>` `n` times (after `warmup` untimed runs, so the file cache is warm for
 * every candidate alike) and returns the median wall time. A non-zero exit is an error.
 */
export function timeNode(args: string[], options: NodeRunOptions = {}): SpawnTiming {
  const n = options.n ?? 15;
  const runs: number[] = [];
  for (let i = 0; i < (options.warmup ?? 2) + n; i++) {
    const ms = timeOnce(args, options);
    if (i >= (options.warmup ?? 2)) runs.push(ms);
  }
  return { medianMs: median(runs), runs };
}

/**
 * `node <baseline>` and `node <args>` run alternately `n` times each (after `warmup` rounds), so
 * that load from elsewhere on a shared machine hits both alike; the median wall time of each.
 */
export function timeNodePaired(
  baseline: string[],
  args: string[],
  options: NodeRunOptions = {},
): { baseline: SpawnTiming; candidate: SpawnTiming } {
  const n = options.n ?? 15;
  const base: number[] = [];
  const cand: number[] = [];
  for (let i = 0; i < (options.warmup ?? 2) + n; i++) {
    const b = timeOnce(baseline, options);
    const c = timeOnce(args, options);
    if (i < (options.warmup ?? 2)) continue;
    base.push(b);
    cand.push(c);
  }
  return { baseline: { medianMs: median(base), runs: base }, candidate: { medianMs: median(cand), runs: cand } };
}
