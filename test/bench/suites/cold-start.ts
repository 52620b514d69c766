/**
 * Cold start of the CLI as a ratio to `node -e 0`: `svc --version`, and `svc adapters ls` with 20
 * installed fixture adapters (in an SVC_INSTALL_DIR, all listed in config `adapters`).
 */
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, timeNode } from "../measure.js";

const N = Number(process.env.BENCH_RUNS ?? 15);
const ADAPTERS = 20;
const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");

async function installFixtures(dir: string): Promise<string[]> {
  const ids: string[] = [];
  await mkdir(join(dir, "install", "node_modules"), { recursive: true });
  await symlink(REPO_ROOT, join(dir, "install", "node_modules", "svc"), "junction");
  const fixture = join(REPO_ROOT, "test/fixtures/packages/svc-fixture-provider");
  for (let i = 1; i <= ADAPTERS; i++) {
    const id = `svc-bench-adapter-${String(i).padStart(2, "0")}`;
    const dest = join(dir, "install", "node_modules", id);
    await cp(fixture, dest, { recursive: true });
    const pj = JSON.parse(await readFile(join(dest, "package.json"), "utf8"));
    pj.name = id;
    pj["svc-adapter"].plugins[0].kind = `bench-${i}`;
    await writeFile(join(dest, "package.json"), JSON.stringify(pj, null, 2));
    ids.push(id);
  }
  await mkdir(join(dir, "home"));
  await writeFile(join(dir, "home", "config.json"), JSON.stringify({ adapters: ids }, null, 2));
  return ids;
}

export const coldStart: BenchSuite = {
  name: "cold-start",
  async run(): Promise<BenchLine[]> {
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-"));
    try {
      await installFixtures(dir);
      const env = { ...process.env, SVC_HOME: join(dir, "home"), SVC_INSTALL_DIR: join(dir, "install"), NO_COLOR: "1" };
      const note = `median of ${N} runs (after 2 warm-up runs each)`;
      // Interleave the baseline with each candidate so drift on the machine hits both alike.
      const base1 = timeNode(["-e", "0"], { n: N, env, cwd: dir });
      const version = timeNode([CLI, "--version"], { n: N, env, cwd: dir });
      const base2 = timeNode(["-e", "0"], { n: N, env, cwd: dir });
      const ls = timeNode([CLI, "adapters", "ls"], { n: N, env, cwd: dir });
      const baseline = (v: number) => ({ name: "node -e 0", value: v });
      return [
        {
          name: "svc --version",
          value: version.medianMs,
          unit: "ms",
          baseline: baseline(base1.medianMs),
          targetRatio: 2.5,
          note,
        },
        {
          name: `svc adapters ls (${ADAPTERS} installed adapters)`,
          value: ls.medianMs,
          unit: "ms",
          baseline: baseline(base2.medianMs),
          note,
        },
      ];
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
