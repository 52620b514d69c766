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

/**
 * Runs `node <args>` `n` times (after `warmup` untimed runs, so the file cache is warm for
 * every candidate alike) and returns the median wall time. A non-zero exit is an error.
 */
export function timeNode(
  args: string[],
  options: { n?: number; warmup?: number; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): SpawnTiming {
  const n = options.n ?? 15;
  const runs: number[] = [];
  for (let i = 0; i < (options.warmup ?? 2) + n; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(process.execPath, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (r.status !== 0)
      throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr.toString().slice(0, 500)}`);
    if (i >= (options.warmup ?? 2)) runs.push(ms);
  }
  return { medianMs: median(runs), runs };
}
