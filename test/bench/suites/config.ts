/**
 * Configuration: `svc config get` cold start beside `svc --version`, a `config set` (lock,
 * validate, durable write) beside a `config get`, and in-process load + resolve of the README's
 * full example config beside a plain JSON.parse of the same text.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { validateConfigTree } from "../../../core/config/load.js";
import { resolveConfig } from "../../../core/config/resolve.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, timeNode } from "../measure.js";

const N = Number(process.env.BENCH_RUNS ?? 15);
const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");

async function exampleText(): Promise<string> {
  const readme = await readFile(join(REPO_ROOT, "docs/configuration.md"), "utf8");
  const block = readme.slice(readme.indexOf("<!-- config-example:start -->"));
  return /```json\n([\s\S]*?)```/.exec(block)![1]!;
}

function perOpMicros(fn: () => void, ops: number): number {
  for (let i = 0; i < 200; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ops; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1e3 / ops;
}

export const config: BenchSuite = {
  name: "config",
  async run(): Promise<BenchLine[]> {
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-config-"));
    try {
      const text = await exampleText();
      await writeFile(join(dir, "config.json"), text);
      const env = { ...process.env, SVC_HOME: dir, NO_COLOR: "1" };
      const note = `median of ${N} runs (after 2 warm-up runs each)`;
      const version = timeNode([CLI, "--version"], { n: N, env });
      const get = timeNode([CLI, "config", "get", "daemon.port"], { n: N, env });
      const set = timeNode([CLI, "config", "set", "sessions.attentionDelaySec", "61"], { n: N, env });
      const get2 = timeNode([CLI, "config", "get", "daemon.port"], { n: N, env });
      const parse = perOpMicros(() => JSON.parse(text), 2000);
      const resolve = perOpMicros(
        () => resolveConfig(validateConfigTree("bench", JSON.parse(text)).config, {}, {}, dir),
        2000,
      );
      return [
        {
          name: "svc config get daemon.port",
          value: get.medianMs,
          unit: "ms",
          baseline: { name: "svc --version", value: version.medianMs },
          note,
        },
        {
          name: "svc config set (lock, validate, durable write)",
          value: set.medianMs,
          unit: "ms",
          baseline: { name: "svc config get", value: get2.medianMs },
          note,
        },
        {
          name: "load + resolve of the README example (in process)",
          value: resolve,
          unit: "µs",
          baseline: { name: "JSON.parse of it", value: parse },
          note: "mean of 2000 calls",
        },
      ];
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
