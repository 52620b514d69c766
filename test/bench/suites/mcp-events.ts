/**
 * MCP events: subscribe-to-first-delivery latency of an `events/subscribe` (webhook mode, through
 * the official MCP SDK client) beside creating a plain webhook sentinel over REST, both followed by
 * one pushed event until the receiver has it (each includes the challenge round trip); and
 * delivered events per second through one MCP subscription beside one plain webhook sentinel, in
 * the same daemon against the same HTTPS receiver (target: 1.0 within noise, as a subscription is
 * a webhook sentinel).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { z } from "zod";
import type { BenchLine, BenchSuite } from "../types.js";
import { median } from "../measure.js";
import {
  SECRET,
  makeHome,
  pushAndDeliver,
  startDaemon,
  startReceiver,
  type Daemon,
  type Receiver,
} from "../webhook-rig.js";

const EVENTS = Number(process.env.BENCH_MCP_EVENTS ?? 5_000);
const LATENCY_RUNS = Number(process.env.BENCH_MCP_LATENCY_RUNS ?? 20);

async function firstDelivery(d: Daemon, rx: Receiver, subject: string, id: string): Promise<void> {
  rx.delivered.clear();
  await d.push([{ id, type: "bench.event.made", subjects: [subject], data: { id } }]);
  while (!rx.delivered.has(id)) await new Promise((r) => setTimeout(r, 1));
}

export const mcpEvents: BenchSuite = {
  name: "mcp-events",
  async run(): Promise<BenchLine[]> {
    const rx = await startReceiver();
    const d = await startDaemon(await makeHome());
    const client = new Client({ name: "svc-bench", version: "0.0.0" });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL("/mcp", d.base), {
          requestInit: { headers: { authorization: `Bearer ${d.token}` } },
        }),
      );
      const subscribe = (subject: string) =>
        client.request(
          {
            method: "events/subscribe",
            params: {
              name: "agentpush.event",
              arguments: { subject: `${subject}*` },
              delivery: { mode: "webhook", url: rx.url, secret: SECRET },
            },
          } as never,
          z.looseObject({ id: z.string() }),
        );
      // Warm both paths (JIT, TLS sessions) before timing.
      for (let i = 0; i < 5; i++) {
        await subscribe(`warm-mcp-${i}`);
        await d.call("POST", "/sentinels", {
          match: [{ subject: `warm-rest-${i}*` }],
          until: { kind: "never" },
          provider: "agentpush",
          target: { kind: "webhook", url: rx.url, secret: SECRET },
        });
      }
      const mcp: number[] = [];
      const rest: number[] = [];
      for (let i = 0; i < LATENCY_RUNS; i++) {
        let t0 = performance.now();
        await subscribe(`lat-mcp-${i}`);
        await firstDelivery(d, rx, `lat-mcp-${i}`, `evt_lat_mcp_${i}`);
        mcp.push(performance.now() - t0);
        t0 = performance.now();
        await d.call("POST", "/sentinels", {
          match: [{ subject: `lat-rest-${i}*` }],
          until: { kind: "never" },
          provider: "agentpush",
          target: { kind: "webhook", url: rx.url, secret: SECRET },
        });
        await firstDelivery(d, rx, `lat-rest-${i}`, `evt_lat_rest_${i}`);
        rest.push(performance.now() - t0);
      }

      // Throughput: subjects `bench:0` go to one subscription, then `bench:1` to one plain sentinel.
      await subscribe("tp:0");
      await d.call("POST", "/sentinels", {
        match: [{ subject: "tp:1*" }],
        until: { kind: "never" },
        provider: "agentpush",
        target: { kind: "webhook", url: rx.url, secret: SECRET },
      });
      const rate = async (subject: string, prefix: string) => {
        const t0 = performance.now();
        await pushAndDeliver(d, rx, prefix, EVENTS, 1, subject);
        return EVENTS / ((performance.now() - t0) / 1000);
      };
      await rate("tp:0", "warm_sub");
      await rate("tp:1", "warm_snt");
      const viaSub = median([await rate("tp:0", "sub_a"), await rate("tp:0", "sub_b"), await rate("tp:0", "sub_c")]);
      const viaSentinel = median([
        await rate("tp:1", "snt_a"),
        await rate("tp:1", "snt_b"),
        await rate("tp:1", "snt_c"),
      ]);
      return [
        {
          name: "events/subscribe to first delivery (median)",
          value: median(mcp),
          unit: "ms",
          baseline: { name: "POST /sentinels (webhook) to first delivery", value: median(rest) },
          note: `${LATENCY_RUNS} runs each, alternating; both include the challenge round trip`,
        },
        {
          name: `delivered events/s through one MCP subscription`,
          value: viaSub,
          unit: "events/s",
          baseline: { name: "one plain webhook sentinel", value: viaSentinel },
          note: `${EVENTS} events per run, median of 3; target 1.0 within noise (a subscription is a webhook sentinel)`,
        },
      ];
    } finally {
      await client.close().catch(() => undefined);
      await d.stop();
      await rx.close();
    }
  },
};
