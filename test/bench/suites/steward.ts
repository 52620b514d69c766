/**
 * The session steward's added load: two daemons side by side, each with 50 idle sessions of the
 * fixture echo agent (each had one turn), one with the steward configured (a judge key and a judge
 * on loopback, which judged each session's turn) and one without; then the CPU time (user +
 * system, from /proc) each daemon uses per minute over the same idle window.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeJudge } from "../../support/fake-judge.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT } from "../measure.js";
import { call, startDaemon, type Daemon } from "./sessions.js";

const LIVE = 50;
const WINDOW_SEC = Number(process.env.BENCH_STEWARD_SEC ?? 20);
const AGENT = join(REPO_ROOT, "test/fixtures/acp-agents/echo-agent.mjs");

async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function withSessions(d: Daemon, cwd: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < LIVE; i++) {
    const { descriptor } = await call<{ descriptor: { id: string } }>(d, "POST", "/sessions", {
      adapter: "echo",
      cwd,
      prompt: `hello ${i}`,
      wait: true,
    });
    ids.push(descriptor.id);
  }
  return ids;
}

export const steward: BenchSuite = {
  name: "steward",
  async run(): Promise<BenchLine[]> {
    const judge = await startFakeJudge();
    const homes = await Promise.all([
      mkdtemp(join(tmpdir(), "svc-bench-steward-on-")),
      mkdtemp(join(tmpdir(), "svc-bench-steward-off-")),
    ]);
    const agents = { echo: { bin: process.execPath, bin_args: [AGENT] } };
    await writeFile(
      join(homes[0], "config.json"),
      JSON.stringify({ acpAgents: agents, extJudge: { baseUrl: judge.baseUrl, apiKey: "bench-judge-key" } }),
    );
    await writeFile(join(homes[1], "config.json"), JSON.stringify({ acpAgents: agents }));
    const daemons: Daemon[] = [];
    try {
      for (const home of homes) daemons.push(await startDaemon(home));
      const [on, off] = daemons as [Daemon, Daemon];
      const ids = await Promise.all([withSessions(on, homes[0]), withSessions(off, homes[1])]);
      // Every session's turn judged, then idle.
      const deadline = Date.now() + 60_000;
      while (judge.requests.length < LIVE && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1000));
      const c0 = await Promise.all([cpuMs(on.pid), cpuMs(off.pid)]);
      const before = judge.requests.length;
      await new Promise((r) => setTimeout(r, WINDOW_SEC * 1000));
      const c1 = await Promise.all([cpuMs(on.pid), cpuMs(off.pid)]);
      const perMin = (i: 0 | 1) => ((c1[i] - c0[i]) * 60) / WINDOW_SEC;
      for (const [i, d] of daemons.entries()) for (const id of ids[i]!) await call(d, "POST", `/sessions/${id}/stop`);
      return [
        {
          name: `daemon CPU with ${LIVE} idle sessions, steward configured`,
          value: perMin(0),
          unit: "ms CPU/min",
          baseline: { name: "steward not configured", value: Math.max(perMin(1), 1) },
          note: `${WINDOW_SEC} s idle window (BENCH_STEWARD_SEC), /proc ticks of 10 ms; ${before} judge requests while the sessions started (one per turn), ${judge.requests.length - before} while idle`,
        },
      ];
    } finally {
      for (const d of daemons) await d.stop();
      await judge.close();
      await Promise.all(homes.map((h) => rm(h, { recursive: true, force: true })));
    }
  },
};
