/** A real daemon for a bench suite: `svc serve --port 0` on `home`, found through its runtime.json. */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./measure.js";

const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");

export interface BenchDaemon {
  base: string;
  token: string;
  stop(): Promise<void>;
}

export async function startBenchDaemon(home: string, env: NodeJS.ProcessEnv = {}): Promise<BenchDaemon> {
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
    env: { ...process.env, SVC_HOME: home, SVC_LOG_LEVEL: "warn", ...env },
    stdio: "ignore",
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const info = await readFile(join(home, "runtime.json"), "utf8").then(JSON.parse, () => undefined);
    if (info?.pid === child.pid) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      return {
        base: `http://127.0.0.1:${info.port}`,
        token: info.token,
        stop: async () => (child.kill("SIGTERM"), exited),
      };
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("the daemon did not start");
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Writes `$home/sentinels.json` with `n` active sentinels (before the daemon starts), sentinel `i`
 * watching subject `job:<i>` from agentpush with the target `target(i)`.
 */
export async function writeBenchSentinels(
  home: string,
  n: number,
  target: (i: number) => Record<string, unknown>,
  extra: (i: number) => Record<string, unknown> = () => ({}),
): Promise<void> {
  await mkdir(home, { recursive: true });
  const now = Date.now();
  const sentinels = Array.from({ length: n }, (_, i) => ({
    id: `snt_bench${String(i).padStart(6, "0")}`,
    status: "active",
    createdAt: now,
    updatedAt: now,
    deliveredCount: 0,
    spec: {
      match: [{ subject: `job:${i}` }],
      until: { kind: "never" },
      target: target(i),
      provider: "agentpush",
      ...extra(i),
    },
  }));
  await writeFile(join(home, "sentinels.json"), JSON.stringify({ version: 1, sentinels }));
}
