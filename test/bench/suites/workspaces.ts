/**
 * Workspaces: the spawn path's worktree step (find the repo, `git worktree add`, record, look for
 * heavy phases; none here) beside a plain `git worktree add` of the same repository; and 10
 * provisionings (a 100 ms setup hook each) against `provisionConcurrency: 2`, beside the same 10
 * at cap 1 (serial), with the admission order checked against the arrival order.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import "reflect-metadata";
import { createContainer } from "../../../core/container.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { CONFIG, resolve } from "../../../core/tokens.js";
import { WORKSPACES } from "../../../core/workspaces/workspace-service.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { median } from "../measure.js";

const N = Number(process.env.BENCH_RUNS ?? 15);
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "b",
  GIT_AUTHOR_EMAIL: "b@example.com",
  GIT_COMMITTER_NAME: "b",
  GIT_COMMITTER_EMAIL: "b@example.com",
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, { cwd, env: GIT_ENV, stdio: ["ignore", "pipe", "pipe"] });

async function makeRepo(dir: string, files: Record<string, string>): Promise<string> {
  const repo = join(dir, "app");
  await mkdir(repo, { recursive: true });
  git(repo, "init", "-q", "-b", "main");
  for (let i = 0; i < 200; i++) await writeFile(join(repo, `file-${i}.txt`), `line ${i}\n`.repeat(20));
  for (const [f, text] of Object.entries(files)) {
    await mkdir(join(repo, f, ".."), { recursive: true });
    await writeFile(join(repo, f), text);
  }
  git(repo, "add", "-A");
  git(repo, "commit", "-q", "-m", "bench");
  return repo;
}

async function workspaces(home: string, config: Record<string, unknown>) {
  await writeFile(join(home, "config.json"), JSON.stringify(config));
  const c = await createContainer({
    home,
    env: { PATH: process.env.PATH, SVC_HOME: home },
    logger: createMemoryLogger(),
  });
  return { ws: resolve(c, WORKSPACES), config: resolve(c, CONFIG) };
}

async function spawnToReady(dir: string): Promise<BenchLine> {
  const repo = await makeRepo(dir, {});
  const home = join(dir, "home");
  await mkdir(home);
  const { ws } = await workspaces(home, {});
  const ours: number[] = [];
  const plain: number[] = [];
  const timeOurs = async (i: number) => {
    const t0 = process.hrtime.bigint();
    await ws.place({
      sessionId: `ses_bench${i}`,
      cwd: repo,
      worktree: `s${i}`,
      adapter: "echo",
      usedBy: () => undefined,
    });
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  const timePlain = (i: number) => {
    const t0 = process.hrtime.bigint();
    git(repo, "worktree", "add", "-q", "-b", `plain-${i}`, join(dir, "plain", `p${i}`), "HEAD");
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  for (let i = 0; i < N + 2; i++) {
    // Alternating which goes first, so neither always pays for the other's cache effects.
    let a: number;
    let b: number;
    if (i % 2) {
      a = await timeOurs(i);
      b = timePlain(i);
    } else {
      b = timePlain(i);
      a = await timeOurs(i);
    }
    if (i >= 2) ours.push(a), plain.push(b);
  }
  return {
    name: "spawn path's worktree step to a ready tree (no heavy phases)",
    value: median(ours),
    unit: "ms",
    baseline: { name: "git worktree add of the same repo (200 files)", value: median(plain) },
    note: `median of ${N}; ours = find the repo + git worktree add + svc's marker (fsynced) and its exclude line + the checksummed record in worktrees.json + looking for .svc/worktree.json and lockfiles`,
  };
}

async function queueRun(dir: string, cap: number): Promise<{ ms: number; fair: boolean }> {
  const root = await realpath(await mkdtemp(join(dir, `q${cap}-`)));
  const repo = await makeRepo(root, { ".svc/worktree.json": JSON.stringify({ install: false, setup: ["sleep 0.1"] }) });
  const home = join(root, "home");
  await mkdir(home);
  const { ws } = await workspaces(home, { worktrees: { provisionConcurrency: cap } });
  const placed = [];
  for (let i = 0; i < 10; i++)
    placed.push({
      id: `ses_q${i}`,
      p: await ws.place({
        sessionId: `ses_q${i}`,
        cwd: repo,
        worktree: `q${i}`,
        adapter: "echo",
        usedBy: () => undefined,
      }),
    });
  const t0 = process.hrtime.bigint();
  await Promise.all(placed.map(({ id, p }) => ws.provision(id, p.worktree!, p.provision!)));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const fair = ws.queue.admitted.join(",") === placed.map((x) => x.id).join(",");
  return { ms, fair };
}

export const workspacesSuite: BenchSuite = {
  name: "workspaces",
  async run(): Promise<BenchLine[]> {
    const dir = await realpath(await mkdtemp(join(tmpdir(), "svc-bench-ws-")));
    try {
      const ready = await spawnToReady(dir);
      const capped = await queueRun(dir, 2);
      const serial = await queueRun(dir, 1);
      return [
        ready,
        {
          name: "10 provisionings (100 ms setup hook each) at provisionConcurrency 2",
          value: capped.ms,
          unit: "ms",
          baseline: { name: "the same 10 at cap 1 (serial)", value: serial.ms },
          note: `ideal ratio 0.50; admission order equals arrival order: ${capped.fair && serial.fair ? "yes" : "NO"}`,
        },
      ];
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
