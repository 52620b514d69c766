/** A real daemon for bench suites: `svc serve --port 0` on a prepared home, found through its runtime.json. */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { REPO_ROOT } from "./measure.js";

export interface BenchDaemon {
  base: string;
  token: string;
  stop(): Promise<void>;
}

export async function spawnDaemon(home: string, env: NodeJS.ProcessEnv): Promise<BenchDaemon> {
  const cli = join(REPO_ROOT, "dist/core/cli/svc.js");
  const child = spawn(process.execPath, [cli, "serve", "--port", "0"], { env, stdio: "ignore" });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const info = await readFile(join(home, "runtime.json"), "utf8").then(JSON.parse, () => undefined);
    if (info?.pid === child.pid) {
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

/** Makes `home` with a sentinels.json of `n` active agentpush sentinels, sentinel i watching `job:i` and delivering to `target(i)`. */
export async function writeSentinels(home: string, n: number, target: (i: number) => Record<string, unknown>) {
  await mkdir(home, { recursive: true });
  const now = Date.now();
  const sentinels = Array.from({ length: n }, (_, i) => ({
    id: `snt_bench${String(i).padStart(6, "0")}`,
    status: "active",
    createdAt: now,
    updatedAt: now,
    deliveredCount: 0,
    spec: { match: [{ subject: `job:${i}` }], until: { kind: "never" }, target: target(i), provider: "agentpush" },
  }));
  await writeFile(join(home, "sentinels.json"), JSON.stringify({ version: 1, sentinels }));
}
