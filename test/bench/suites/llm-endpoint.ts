/**
 * The llm-endpoint sidecar's cost on the path of every model call: the latency it adds to a
 * non-streaming call and to the first streamed event, each beside the same call made directly to
 * the same fake upstream in the same run (target: p50 overhead under 1 ms); and the sidecar's idle
 * RSS beside a bare `node` process that only waits.
 */
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import { startFakeLlmUpstream } from "../../support/fake-llm-upstream.js";
import { startSidecar } from "../../support/llm-sidecar.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { median, REPO_ROOT } from "../measure.js";
import { join } from "node:path";

const CALLS = 400;
const WARMUP = 50;
const KEY = "sk-ant-bench-key";
const TOKEN = "svc_llm_bench_token";

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** One call over a kept-alive connection: resolves with ms to headers+whole body, and to the first body byte. */
function call(base: string, stream: boolean, key: string): Promise<{ totalMs: number; firstMs: number }> {
  const body = JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 16,
    stream,
    messages: [{ role: "user", content: "hi" }],
  });
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    let first = 0;
    const req = request(
      `${base}/v1/messages`,
      {
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          "anthropic-version": "2023-06-01",
          "x-api-key": key,
          "content-length": Buffer.byteLength(body),
        },
      },
      (res) => {
        res.on("data", () => {
          if (!first) first = Number(process.hrtime.bigint() - t0) / 1e6;
        });
        res.on("end", () => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
          resolve({ totalMs: Number(process.hrtime.bigint() - t0) / 1e6, firstMs: first });
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** Alternates direct and proxied calls so both see the same machine load. */
async function measure(
  direct: string,
  proxied: string,
  stream: boolean,
): Promise<{ direct: number[]; proxied: number[] }> {
  const out = { direct: [] as number[], proxied: [] as number[] };
  for (let i = 0; i < WARMUP + CALLS; i++) {
    const d = await call(direct, stream, KEY);
    const p = await call(proxied, stream, TOKEN);
    if (i < WARMUP) continue;
    out.direct.push(stream ? d.firstMs : d.totalMs);
    out.proxied.push(stream ? p.firstMs : p.totalMs);
  }
  return out;
}

async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

async function bareNodeRss(): Promise<number> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await new Promise((r) => setTimeout(r, 500));
  const rss = await rssMiB(child.pid!);
  child.kill();
  return rss;
}

export const llmEndpoint: BenchSuite = {
  name: "llm-endpoint",
  async run(): Promise<BenchLine[]> {
    const fake = await startFakeLlmUpstream();
    const sidecar = await startSidecar({
      entry: join(REPO_ROOT, "dist/core/llm-endpoint/sidecar/main.js"),
      routes: [
        {
          name: "anthropic",
          provider: "anthropic",
          baseUrl: fake.url,
          models: ["claude-*"],
          key: { kind: "apiKey", value: KEY, from: "bench" },
        },
      ],
    });
    try {
      sidecar.grant(TOKEN, "ses_bench");
      await sidecar.sync();
      await new Promise((r) => setTimeout(r, 500));
      const idle = await rssMiB(sidecar.child.pid!);
      const bare = await bareNodeRss();
      const plain = await measure(fake.url, sidecar.url, false);
      const streamed = await measure(fake.url, sidecar.url, true);
      const p50 = {
        direct: median(plain.direct),
        proxied: median(plain.proxied),
        firstDirect: median(streamed.direct),
        firstProxied: median(streamed.proxied),
      };
      const added = (a: number, b: number) =>
        `added p50 ${(a - b).toFixed(3)} ms (target < 1 ms: ${a - b < 1 ? "met" : "NOT met"}); ${CALLS} calls each, alternated, on one kept-alive connection`;
      return [
        {
          name: "non-streaming call through the sidecar, p50",
          value: p50.proxied,
          unit: "ms",
          baseline: { name: "the same call direct to the upstream", value: p50.direct },
          note: added(p50.proxied, p50.direct),
        },
        {
          name: "first streamed event through the sidecar, p50",
          value: p50.firstProxied,
          unit: "ms",
          baseline: { name: "direct to the upstream", value: p50.firstDirect },
          note: added(p50.firstProxied, p50.firstDirect),
        },
        {
          name: "sidecar RSS, idle (configured, one session granted)",
          value: idle,
          unit: "MiB",
          baseline: { name: "a bare node process waiting", value: bare },
        },
      ];
    } finally {
      // First the kept-alive sockets: the fake's close waits for its connections to end.
      agent.destroy();
      await sidecar.stop();
      await fake.close();
    }
  },
};
