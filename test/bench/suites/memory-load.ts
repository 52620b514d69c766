/**
 * Memory over time under an audit load (issue 29): the daemon's RSS at start, after 30 s idle, under
 * the load (peak and median) and 10, 30 and 60 s after it ends, beside its idle figure. Target: 60 s
 * after the load RSS is back to at most 1.2x the idle figure.
 *
 * The audit load, as a careful user would run it, for 60 s:
 * - 8 webhook sentinels (subjects `load:0..7`) delivering to a local HTTPS receiver that answers 200 at once;
 * - 200 subscribers on `GET /events` (the daemon's SSE stream: every matched event reaches all 200),
 *   each reading as it comes and, when the daemon drops it, reconnecting after the suggested `retry:`
 *   with `Last-Event-ID`, as an EventSource does;
 * - 100 writers, each pushing its next batch of 8 events (~575 bytes each) through agentpush as soon as
 *   the last push was answered (a 503, the outbox's backpressure, retried after 100 ms);
 * - one loop creating a webhook sentinel and deleting it again.
 * The load ends when the writers and the loop stop and the subscribers disconnect; deliveries of what
 * was accepted go on after it, within the 60 s.
 *
 * Figures come from outside the daemon: RSS, anonymous and file-backed RSS from /proc/<pid>/status
 * and smaps_rollup, and the V8 heap (used and committed after the last collection) from the daemon's
 * own `--trace-gc` lines, so it needs no route of its own.
 */
import { request as httpRequest, type ClientRequest } from "node:http";
import { readFile, rm } from "node:fs/promises";
import { loadavg } from "node:os";
import type { BenchLine, BenchSuite } from "../types.js";
import { median } from "../measure.js";
import {
  makeHome,
  webhookSpec as spec,
  startDaemon,
  startReceiver,
  type Daemon,
  type Receiver,
} from "../webhook-rig.js";

const IDLE_MS = Number(process.env.BENCH_MEMORY_IDLE_MS ?? 30_000);
const LOAD_MS = Number(process.env.BENCH_MEMORY_LOAD_MS ?? 60_000);
const SUBSCRIBERS = Number(process.env.BENCH_MEMORY_SUBSCRIBERS ?? 200);
const WRITERS = Number(process.env.BENCH_MEMORY_WRITERS ?? 100);
const AFTER_S = [10, 30, 60];
const SENTINELS = 8;
const BATCH = 8;
/** BENCH_MEMORY_TRACE=1 prints every sample on stderr. */
const TRACE = process.env.BENCH_MEMORY_TRACE === "1";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const load = () => loadavg()[0]!.toFixed(1);

/** One reading of the daemon's memory, in MiB. */
export interface MemorySample {
  rss: number;
  anon: number;
  file: number;
  /** V8 heap used and committed after its last collection (from `--trace-gc`), when one ran. */
  heapUsed?: number;
  heapTotal?: number;
}

const kib = (text: string, key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN);

/**
 * Reads `--trace-gc` lines (`[pid:0x…] 812 ms: Mark-Compact 45.2 (60.1) -> 30.1 (62.0) MB`) and keeps,
 * per isolate (the main thread's, and the module loader's thread), the heap used and committed after
 * its last collection; {@link last} is their sum.
 */
export class GcTrace {
  private readonly isolates = new Map<string, { used: number; total: number }>();
  private rest = "";

  get last(): { used: number; total: number } | undefined {
    if (this.isolates.size === 0) return undefined;
    const all = [...this.isolates.values()];
    return { used: all.reduce((a, b) => a + b.used, 0), total: all.reduce((a, b) => a + b.total, 0) };
  }

  readonly feed = (text: string): void => {
    const lines = (this.rest + text).split("\n");
    this.rest = lines.pop()!;
    for (const line of lines) {
      const m = /^\[\d+:(0x[0-9a-f]+)\].* -> ([\d.]+) \(([\d.]+)\) MB/.exec(line);
      if (m) this.isolates.set(m[1]!, { used: Number(m[2]), total: Number(m[3]) });
    }
  };
}

export async function memoryOf(pid: number, gc?: GcTrace): Promise<MemorySample> {
  const m = await readMemory(pid, gc);
  if (TRACE) process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${describeMemory(m)} load ${load()}\n`);
  return m;
}

async function readMemory(pid: number, gc?: GcTrace): Promise<MemorySample> {
  const [status, rollup] = await Promise.all([
    readFile(`/proc/${pid}/status`, "utf8"),
    readFile(`/proc/${pid}/smaps_rollup`, "utf8").catch(() => ""),
  ]);
  return {
    rss: kib(status, "VmRSS") / 1024,
    anon: (rollup ? kib(rollup, "Anonymous") : kib(status, "RssAnon")) / 1024,
    file: kib(status, "RssFile") / 1024,
    ...(gc?.last ? { heapUsed: gc.last.used, heapTotal: gc.last.total } : {}),
  };
}

export const describeMemory = (m: MemorySample) =>
  `${m.rss.toFixed(0)} MiB (anon ${m.anon.toFixed(0)}, file ${m.file.toFixed(0)}` +
  (m.heapUsed === undefined ? ")" : `, V8 heap ${m.heapUsed.toFixed(0)}/${m.heapTotal!.toFixed(0)})`);

interface LoadCounts {
  pushed: number;
  accepted: number;
  refused: number;
  sseEvents: number;
  sseDropped: number;
  churned: number;
}

/** One `GET /events` subscriber that reconnects (after 2 s, with Last-Event-ID) until `stop()`. */
function subscriber(d: Daemon, counts: LoadCounts): { stop(): void } {
  let stopped = false;
  let req: ClientRequest | undefined;
  let lastId: string | undefined;
  const connect = () => {
    if (stopped) return;
    const headers: Record<string, string> = { authorization: `Bearer ${d.token}`, accept: "text/event-stream" };
    if (lastId) headers["last-event-id"] = lastId;
    req = httpRequest(`${d.base}/events`, { headers, agent: false }, (res) => {
      let rest = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const parts = (rest + chunk).split("\n\n");
        rest = parts.pop()!;
        for (const p of parts) {
          const id = /^id: (\d+)$/m.exec(p)?.[1];
          if (id) (lastId = id), counts.sseEvents++;
        }
      });
      res.on("close", () => {
        if (stopped) return;
        counts.sseDropped++;
        setTimeout(connect, 2_000);
      });
    });
    req.on("error", () => {
      if (!stopped) setTimeout(connect, 2_000);
    });
    req.end();
  };
  connect();
  return {
    stop() {
      stopped = true;
      req?.destroy();
    },
  };
}

/** Runs the audit load for `ms`; `sample` is called every second meanwhile. */
export async function auditLoad(d: Daemon, rx: Receiver, ms: number, sample: () => Promise<void>): Promise<LoadCounts> {
  const counts: LoadCounts = { pushed: 0, accepted: 0, refused: 0, sseEvents: 0, sseDropped: 0, churned: 0 };
  const subs = Array.from({ length: SUBSCRIBERS }, () => subscriber(d, counts));
  const until = Date.now() + ms;
  const pad = "x".repeat(400);
  const writer = async (w: number) => {
    for (let i = 0; Date.now() < until; i += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, k) => ({
        id: `w${w}_${i + k}`,
        type: "load.event.made",
        subjects: [`load:${(w + i + k) % SENTINELS}`],
        data: { i: i + k, pad },
      }));
      counts.pushed += BATCH;
      const status = await d.push(batch).catch(() => 0);
      if (status >= 200 && status < 300) counts.accepted += BATCH;
      else (counts.refused += BATCH), await sleep(100);
    }
  };
  const churn = async () => {
    while (Date.now() < until) {
      const created = await d.call<{ id: string }>("POST", "/sentinels", spec(rx.url, `churn:${counts.churned}`));
      await d.call("DELETE", `/sentinels/${created.id}`);
      counts.churned++;
    }
  };
  let sampling = true;
  const sampler = (async () => {
    while (sampling) await Promise.all([sample(), sleep(1_000)]);
  })();
  await Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), churn()]);
  for (const s of subs) s.stop();
  sampling = false;
  await sampler;
  return counts;
}

export const memoryLoad: BenchSuite = {
  name: "memory-load",
  async run(): Promise<BenchLine[]> {
    const rx = await startReceiver();
    const home = await makeHome();
    const gc = new GcTrace();
    const d = await startDaemon(home, { nodeArgs: ["--trace-gc"], onStdout: gc.feed });
    try {
      const start = await memoryOf(d.pid, gc);
      for (let k = 0; k < SENTINELS; k++) await d.call("POST", "/sentinels", spec(rx.url, `load:${k}`));
      const loadBefore = load();
      await sleep(IDLE_MS);
      const idle = await memoryOf(d.pid, gc);

      const during: MemorySample[] = [];
      const counts = await auditLoad(d, rx, LOAD_MS, async () => void during.push(await memoryOf(d.pid, gc)));
      const loadDuring = load();
      const ended = Date.now();
      const after: Array<[number, MemorySample]> = [];
      let drainedS: number | undefined;
      for (const s of AFTER_S) {
        while (Date.now() < ended + s * 1000) {
          if (drainedS === undefined && rx.delivered.size >= counts.accepted) drainedS = (Date.now() - ended) / 1000;
          await sleep(250);
          if (TRACE && (Date.now() - ended) % 5000 < 250) await memoryOf(d.pid, gc);
        }
        after.push([s, await memoryOf(d.pid, gc)]);
      }
      const peak = during.reduce((a, b) => (b.rss > a.rss ? b : a), during[0]!);
      const medianRss = median(during.map((m) => m.rss));
      const last = after.at(-1)![1];
      const afterText = after.map(([s, m]) => `${s} s ${describeMemory(m)}`).join("; ");
      const loadText =
        `${WRITERS} writers pushed ${counts.pushed} events in ${LOAD_MS / 1000} s (${counts.accepted} accepted, ` +
        `${counts.refused} refused), receiver got ${rx.delivered.size} ` +
        `(all accepted by ${drainedS === undefined ? "never" : `${drainedS.toFixed(0)} s after`}); ` +
        `${SUBSCRIBERS} subscribers read ${counts.sseEvents} SSE events, dropped ${counts.sseDropped} times; ` +
        `${counts.churned} sentinels created and deleted; load average ${loadBefore} idle, ${loadDuring} under load`;
      return [
        {
          name: `daemon RSS ${AFTER_S.at(-1)} s after the audit load (${SUBSCRIBERS} SSE subscribers, ${WRITERS} writers, ${LOAD_MS / 1000} s)`,
          value: last.rss,
          unit: "MiB",
          baseline: { name: `the same daemon after ${IDLE_MS / 1000} s idle`, value: idle.rss },
          targetRatio: 1.2,
          note: `start ${describeMemory(start)}; idle ${describeMemory(idle)}; after the load: ${afterText}`,
        },
        {
          name: "daemon peak RSS under the audit load",
          value: peak.rss,
          unit: "MiB",
          baseline: { name: "idle", value: idle.rss },
          note: `peak ${describeMemory(peak)}, median ${medianRss.toFixed(0)} MiB; ${loadText}`,
        },
      ];
    } finally {
      await d.stop();
      await rx.close();
      await rm(home, { recursive: true, force: true });
    }
  },
};
