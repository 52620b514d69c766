/**
 * CLI latency against a running daemon, as a ratio to `node -e 0` measured in the same run:
 * `svc status` and `svc sentinel list` with 100 sentinels (target: at most 1.5x; both take the
 * CLI's fast path), the same two through the full commander program (`SVC_NO_FAST_PATH=1`) for
 * contrast, `svc --help`; and `GET /status` in a daemon holding 1,000 sentinels beside `GET /health`.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, median, timeNodePaired } from "../measure.js";
import { startBenchDaemon, writeBenchSentinels, type BenchDaemon } from "../daemon.js";

const N = Number(process.env.BENCH_RUNS ?? 15);
const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");

interface Daemon extends BenchDaemon {
  home: string;
}

/** A daemon on a fresh home whose sentinels.json holds `n` session-target sentinels. */
async function startDaemon(dir: string, n: number): Promise<Daemon> {
  const home = join(dir, `home-${n}`);
  await writeBenchSentinels(home, n, (i) => ({ kind: "session", sessionId: `ses_bench${i}` }));
  return { home, ...(await startBenchDaemon(home)) };
}

/** Median times of `n` sequential GETs of each path, alternating (in-process, warm client), in ms. */
async function getMs(d: Daemon, paths: string[], n: number): Promise<number[]> {
  const runs = paths.map(() => [] as number[]);
  for (let i = 0; i < n + 5; i++) {
    for (const [j, path] of paths.entries()) {
      const t0 = process.hrtime.bigint();
      const res = await fetch(d.base + path, { headers: { authorization: `Bearer ${d.token}` } });
      if (!res.ok) throw new Error(`GET ${path}: ${res.status}`);
      await res.arrayBuffer();
      if (i >= 5) runs[j]!.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  }
  return runs.map(median);
}

export const cli: BenchSuite = {
  name: "cli",
  async run(): Promise<BenchLine[]> {
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-cli-"));
    try {
      const lines: BenchLine[] = [];
      const d = await startDaemon(dir, 100);
      try {
        const env = { ...process.env, SVC_HOME: d.home, NO_COLOR: "1" };
        const full = { ...env, SVC_NO_FAST_PATH: "1" };
        const note = `median of ${N} runs each, alternating with node -e 0 (after 2 warm-up rounds), daemon running with 100 sentinels`;
        const figure = (name: string, args: string[], e: NodeJS.ProcessEnv, targetRatio?: number): BenchLine => {
          const t = timeNodePaired(["-e", "0"], [CLI, ...args], { n: N, env: e, cwd: dir });
          return {
            name,
            value: t.candidate.medianMs,
            unit: "ms",
            baseline: { name: "node -e 0", value: t.baseline.medianMs },
            ...(targetRatio ? { targetRatio } : {}),
            note,
          };
        };
        lines.push(
          figure("svc status", ["status"], env, 1.5),
          figure("svc sentinel list", ["sentinel", "list"], env, 1.5),
          figure("svc status --json", ["status", "--json"], env, 1.5),
          figure("svc status through the full program (SVC_NO_FAST_PATH=1)", ["status"], full),
          figure("svc sentinel list through the full program (SVC_NO_FAST_PATH=1)", ["sentinel", "list"], full),
          figure("svc --help", ["--help"], env),
        );
      } finally {
        await d.stop();
      }
      const big = await startDaemon(dir, 1_000);
      try {
        const [status, health] = await getMs(big, ["/status", "/health"], 50);
        lines.push({
          name: "GET /status, 1,000 sentinels",
          value: status!,
          unit: "ms",
          baseline: { name: "GET /health", value: health! },
          note: "median of 50 requests each, alternating, from a warm client",
        });
      } finally {
        await big.stop();
      }
      return lines;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
