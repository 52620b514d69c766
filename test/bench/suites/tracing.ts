/**
 * The cost of tracing per delivered session event: the same daemon runs sessions of the
 * trace-agent fixture (each turn: the prompt's receipt and start, a tool call and its completion,
 * a reply, the turn's end) traced, exporting to an OTLP receiver on loopback that decodes every
 * batch, and untraced, alternated round by round; the figure is the wall time of the turns over
 * the transcript lines they wrote.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOtlpReceiver } from "../../support/otlp-receiver.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { median, REPO_ROOT } from "../measure.js";
import { call, startDaemon, type Daemon } from "./sessions.js";

const ROUNDS = Number(process.env.BENCH_RUNS ?? 5);
const TURNS = 40;
const AGENT = join(REPO_ROOT, "test/fixtures/acp-agents/trace-agent.mjs");

/** Microseconds per transcript line over TURNS turns of one new session. */
async function perEventUs(d: Daemon, cwd: string, traced: boolean): Promise<number> {
  const { descriptor } = await call<{ descriptor: { id: string } }>(d, "POST", "/sessions", {
    adapter: "tracer",
    cwd,
    extTracing: traced,
    prompt: "warm up",
    wait: true,
  });
  const before = (await call<{ events: unknown[] }>(d, "GET", `/sessions/${descriptor.id}/export`)).events.length;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < TURNS; i++)
    await call(d, "POST", `/sessions/${descriptor.id}/prompt`, { text: `event ${i}`, wait: true });
  const us = Number(process.hrtime.bigint() - t0) / 1e3;
  const after = (await call<{ events: unknown[] }>(d, "GET", `/sessions/${descriptor.id}/export`)).events.length;
  await call(d, "POST", `/sessions/${descriptor.id}/stop`);
  return us / (after - before);
}

export const tracing: BenchSuite = {
  name: "tracing",
  async run(): Promise<BenchLine[]> {
    const receiver = await startOtlpReceiver();
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-tracing-"));
    await writeFile(
      join(dir, "config.json"),
      JSON.stringify({
        defaults: { traceEndpoint: receiver.tracesUrl, traceRedactor: "secrets" },
        acpAgents: { tracer: { bin: process.execPath, bin_args: [AGENT] } },
      }),
    );
    const d = await startDaemon(dir);
    try {
      const on: number[] = [];
      const off: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        for (const traced of r % 2 ? [true, false] : [false, true])
          (traced ? on : off).push(await perEventUs(d, dir, traced));
      }
      const spans = await receiver.waitFor(
        (all) => (all.filter((s) => s.name.startsWith("invoke_agent")).length >= ROUNDS ? all.length : undefined),
        "the traced sessions' spans",
        30_000,
      );
      return [
        {
          name: "time per delivered session event, traced (OTLP/protobuf to a loopback receiver)",
          value: median(on),
          unit: "µs",
          baseline: { name: "untraced", value: median(off) },
          note: `median of ${ROUNDS} sessions each, ${TURNS} turns per session (a tool call and a reply each); ${spans} spans received and decoded`,
        },
      ];
    } finally {
      await d.stop();
      await receiver.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
};
