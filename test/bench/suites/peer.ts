/**
 * svc beside the peer a Node team would build without it (BullMQ 6 on Debian's Redis 7 with
 * `appendfsync always`) and beside raw undici POSTs (the limit): 8 webhook sentinels, 10,000 timed
 * events of about 575 bytes in 64-event batches from 4 pushers, one local HTTPS receiver. The
 * headline layout pins every process of the system under test to core 0 and the pushers and
 * receiver (a child process of their own) to core 1; the unpinned layout runs beside it. The
 * systems alternate run by run. Then push-to-arrival latency at one event per 50 ms, and svc at
 * scale: 1,000 and 10,000 sentinels, restart with 2,000 pending 256 KiB rows, 100,000 events.
 * Sections: BENCH_PEER_SECTIONS (pinned,unpinned,latency,sentinels,restart,100k).
 */
import { spawnSync } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { untrackDir } from "../children.js";
import { median, REPO_ROOT } from "../measure.js";
import { spawnScript, type ChildScript } from "../peer/ipc.js";
import { findRedis, redisVersion } from "../peer/redis.js";
import { loadAverage, num, quantile, ratio, say, spread, table, verdict } from "../peer/report.js";
import { type IngestPlacement, startPeer, startRaw, startSvc, type System } from "../peer/systems.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { cpuMs, rssMiB, seedOutbox, startDaemon, startReceiver } from "../webhook-rig.js";

const env = process.env;
const RUNS = Number(env.BENCH_PEER_RUNS ?? 6);
const EVENTS = Number(env.BENCH_PEER_EVENTS ?? 10_000);
/** Untimed events before each timed run (svc's optimizing compiler settles after about 6,000). */
const WARMUP = Number(env.BENCH_PEER_WARMUP ?? 6_000);
const SENTINELS = 8;
const SECTIONS = new Set((env.BENCH_PEER_SECTIONS ?? "pinned,unpinned,latency,sentinels,restart,100k").split(","));
const INGEST: IngestPlacement = env.BENCH_PEER_INGEST === "in-worker" ? "in-worker" : "separate";
const LATENCY_EVENTS = Number(env.BENCH_PEER_LATENCY_EVENTS ?? 400);
const LATENCY_BLOCK = 50;
const LATENCY_INTERVAL_MS = 50;
const SCALE_COUNTS = [8, 1_000, 10_000];
const SCALE_RUNS = Number(env.BENCH_PEER_SCALE_RUNS ?? 2);
const LONG_EVENTS = Number(env.BENCH_PEER_LONG_EVENTS ?? 100_000);

type Kind = "svc" | "peer" | "raw";
interface Layout {
  name: "pinned" | "unpinned";
  /** taskset CPU list of the system under test, and of the pushers and receiver. */
  system?: string;
  load?: string;
}
interface Figure {
  rate: number;
  cpuUs: number;
  refused: number;
}

const PINNED: Layout = { name: "pinned", system: "0", load: "1" };
const UNPINNED: Layout = { name: "unpinned" };

/** Why the pinned layout cannot run here, if it cannot. */
function pinningUnavailable(): string | undefined {
  if (availableParallelism() < 2) return `only ${availableParallelism()} CPU available`;
  if (spawnSync("taskset", ["-c", "0", "true"]).status !== 0) return "taskset is missing or fails (util-linux)";
  return undefined;
}

async function cpuOf(pids: number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) total += await cpuMs(pid);
  return total;
}

interface Rig {
  load: ChildScript;
  rxUrl: string;
  redis?: string;
}

async function startSystem(rig: Rig, kind: Kind, layout: Layout, sentinels = SENTINELS): Promise<System> {
  if (kind === "svc") return startSvc(rig.rxUrl, sentinels, layout.system);
  if (kind === "peer") return startPeer(rig.redis!, rig.rxUrl, sentinels, INGEST, layout.system);
  return startRaw(layout.system);
}

/** One timed run of `kind` on a fresh system: WARMUP untimed events, then EVENTS timed. */
async function measure(rig: Rig, kind: Kind, layout: Layout, sentinels = SENTINELS): Promise<Figure> {
  const sys = await startSystem(rig, kind, layout, sentinels);
  try {
    if (sys.target) {
      await rig.load.call("push", { ...sys.target, prefix: "warm", n: WARMUP, sentinels });
      const c0 = await cpuOf(sys.pids);
      const r = await rig.load.call<{ ms: number; refused: number }>("push", {
        ...sys.target,
        prefix: "evt",
        n: EVENTS,
        sentinels,
      });
      const c1 = await cpuOf(sys.pids);
      return { rate: (EVENTS * 1000) / r.ms, cpuUs: ((c1 - c0) * 1000) / EVENTS, refused: r.refused };
    }
    await sys.post!(rig.rxUrl, WARMUP, "warm");
    await rig.load.call("arm");
    const c0 = await cpuOf(sys.pids);
    await sys.post!(rig.rxUrl, EVENTS, "raw");
    const r = await rig.load.call<{ ms: number }>("delivered", { n: EVENTS });
    const c1 = await cpuOf(sys.pids);
    return { rate: (EVENTS * 1000) / r.ms, cpuUs: ((c1 - c0) * 1000) / EVENTS, refused: 0 };
  } finally {
    await sys.stop();
  }
}

async function withLoad<T>(layout: Layout, redis: string | undefined, f: (rig: Rig) => Promise<T>): Promise<T> {
  const load = await spawnScript("load-process", layout.load);
  try {
    return await f({ load, rxUrl: await load.call<string>("url"), redis });
  } finally {
    await load.stop();
  }
}

const describe = (kind: Kind, f: Figure) =>
  `${num(f.rate)} delivered/s, ${num(f.cpuUs)} µs CPU/event${kind === "svc" && f.refused ? `, ${f.refused} pushes refused (503) and sent again` : ""}`;

/** svc, peer and raw alternating run by run, RUNS each, on `layout`; prints each run and the table. */
async function compare(layout: Layout, redis: string | undefined): Promise<Record<Kind, Figure[]>> {
  const kinds: Kind[] = redis ? ["svc", "peer", "raw"] : ["svc", "raw"];
  const figures: Record<Kind, Figure[]> = { svc: [], peer: [], raw: [] };
  say(
    `\n  ${layout.name}: ${layout.system ? `the system under test on core ${layout.system} (taskset -c ${layout.system}, all its processes), pushers and receiver on core ${layout.load}` : "no taskset"}; ${RUNS} runs each, alternating`,
  );
  await withLoad(layout, redis, async (rig) => {
    for (let run = 1; run <= RUNS; run++)
      for (const kind of kinds) {
        const before = loadAverage();
        const f = await measure(rig, kind, layout);
        figures[kind].push(f);
        say(`  [${layout.name}] run ${run}/${RUNS} ${kind.padEnd(4)} load ${before}: ${describe(kind, f)}`);
      }
  });
  printTable(layout, figures);
  return figures;
}

function printTable(layout: Layout, f: Record<Kind, Figure[]>): void {
  const m = (k: Kind, key: keyof Figure) => (f[k].length ? median(f[k].map((x) => x[key])) : Number.NaN);
  const row = (label: string, key: keyof Figure) => [
    label,
    ...(["svc", "peer", "raw"] as const).map((k) => spread(f[k].map((x) => x[key]))),
    ratio(m("svc", key), m("peer", key)),
    ratio(m("svc", key), m("raw", key)),
  ];
  say(`\n  ${layout.name}: medians (min–max) of ${RUNS} runs each`);
  for (const line of table(
    ["figure", "svc", "BullMQ peer", "raw POSTs", "svc / peer", "svc / raw"],
    [row("delivered/s", "rate"), row("CPU µs per event", "cpuUs")],
  ))
    say(`  ${line}`);
  if (layout.name !== "pinned") return;
  const rp = m("svc", "rate") / m("peer", "rate");
  const cp = m("svc", "cpuUs") / m("peer", "cpuUs");
  const rr = m("svc", "rate") / m("raw", "rate");
  say(`  target: svc rate >= 2x peer: ${ratio(m("svc", "rate"), m("peer", "rate"))} ${verdict(rp, 2, true)}`);
  say(`  target: svc CPU/event <= 0.5x peer: ${ratio(m("svc", "cpuUs"), m("peer", "cpuUs"))} ${verdict(cp, 0.5)}`);
  say(`  target: svc rate >= 0.5x raw: ${ratio(m("svc", "rate"), m("raw", "rate"))} ${verdict(rr, 0.5, true)}`);
}

function compareLines(layout: Layout, f: Record<Kind, Figure[]>): BenchLine[] {
  const m = (k: Kind, key: keyof Figure) => (f[k].length ? median(f[k].map((x) => x[key])) : Number.NaN);
  const pinned = layout.name === "pinned";
  const lines: BenchLine[] = [];
  const note = `medians of ${RUNS} alternating runs; svc ${num(m("svc", "rate"))}/s, peer ${num(m("peer", "rate"))}/s, raw ${num(m("raw", "rate"))}/s`;
  if (f.peer.length)
    lines.push(
      {
        name: `peer, ${layout.name}: svc ms per delivered event`,
        value: 1000 / m("svc", "rate"),
        unit: "ms",
        baseline: { name: "the BullMQ peer", value: 1000 / m("peer", "rate") },
        targetRatio: pinned ? 0.5 : undefined,
        note,
      },
      {
        name: `peer, ${layout.name}: svc CPU per delivered event`,
        value: m("svc", "cpuUs"),
        unit: "µs",
        baseline: {
          name: `the BullMQ peer (${INGEST === "separate" ? "worker + ingest" : "worker with ingest"} + redis-server)`,
          value: m("peer", "cpuUs"),
        },
        targetRatio: pinned ? 0.5 : undefined,
      },
    );
  lines.push({
    name: `peer, ${layout.name}: svc ms per delivered event`,
    value: 1000 / m("svc", "rate"),
    unit: "ms",
    baseline: { name: "raw undici POSTs", value: 1000 / m("raw", "rate") },
    targetRatio: pinned ? 2 : undefined,
    note: f.peer.length ? undefined : note,
  });
  return lines;
}

/** Push to arrival at one event per 50 ms: svc, the peer and a direct POST after one fdatasync, alternating in blocks. */
async function latency(layout: Layout, redis: string | undefined): Promise<BenchLine[]> {
  say(
    `\n  latency (${layout.name}): one event every ${LATENCY_INTERVAL_MS} ms, ${LATENCY_EVENTS} per system in blocks of ${LATENCY_BLOCK}, alternating; from the push request's start to the receiver's arrival`,
  );
  return withLoad(layout, redis, async (rig) => {
    const systems: Array<[Kind | "direct", System | undefined]> = [
      ["svc", await startSvc(rig.rxUrl, SENTINELS, layout.system)],
    ];
    try {
      if (redis) systems.push(["peer", await startPeer(redis, rig.rxUrl, SENTINELS, INGEST, layout.system)]);
      systems.push(["direct", undefined]);
      const samples = new Map<string, number[]>(systems.map(([name]) => [name, []]));
      for (const [name, sys] of systems) {
        if (sys?.target) await rig.load.call("push", { ...sys.target, prefix: "warm", n: 2_000, sentinels: SENTINELS });
        await rig.load.call("latency", {
          ...sys?.target,
          prefix: `latwarm-${name}`,
          n: 20,
          intervalMs: LATENCY_INTERVAL_MS,
        });
      }
      for (let b = 0; b * LATENCY_BLOCK < LATENCY_EVENTS; b++) {
        const before = loadAverage();
        const block: string[] = [];
        for (const [name, sys] of systems) {
          const ms = await rig.load.call<number[]>("latency", {
            ...sys?.target,
            prefix: `lat${b}-${name}`,
            n: LATENCY_BLOCK,
            intervalMs: LATENCY_INTERVAL_MS,
          });
          samples.get(name)!.push(...ms);
          block.push(`${name} ${num(quantile(ms, 0.5))}/${num(quantile(ms, 0.99))}`);
        }
        say(`  [latency] block ${b + 1}, load ${before}: p50/p99 ms ${block.join(", ")}`);
      }
      const p = (name: Kind | "direct", q: number) => quantile(samples.get(name)!, q);
      for (const line of table(
        ["push to arrival", "p50 ms", "p99 ms"],
        systems.map(([name]) => [
          name === "direct" ? "direct POST + fdatasync" : name,
          num(p(name, 0.5)),
          num(p(name, 0.99)),
        ]),
      ))
        say(`  ${line}`);
      const base = p("direct", 0.5);
      say(
        `  target: svc p50 within 2 ms of the direct POST + fdatasync p50: ${num(p("svc", 0.5) - base)} ms over, ${verdict(p("svc", 0.5) - base, 2)}`,
      );
      return [
        {
          name: `peer latency (${layout.name}): svc push to arrival p50, one event per ${LATENCY_INTERVAL_MS} ms`,
          value: p("svc", 0.5),
          unit: "ms",
          baseline: { name: "a direct POST after one fdatasync'd append", value: base },
          note: `target: within 2 ms of the baseline: ${verdict(p("svc", 0.5) - base, 2)}; p99 svc ${num(p("svc", 0.99))} ms${redis ? `, peer p50/p99 ${num(p("peer", 0.5))}/${num(p("peer", 0.99))} ms` : ""}, direct p99 ${num(p("direct", 0.99))} ms`,
        },
      ];
    } finally {
      for (const [, sys] of systems) await sys?.stop();
    }
  });
}

/** svc's CPU per event and rate with 8, 1,000 and 10,000 sentinels stored, alternating. */
async function sentinelScale(layout: Layout): Promise<BenchLine[]> {
  say(
    `\n  sentinels (${layout.name}): svc with ${SCALE_COUNTS.join(", ")} sentinels stored, each event matching one; ${SCALE_RUNS} runs each, alternating`,
  );
  const figures = new Map<number, Figure[]>(SCALE_COUNTS.map((n) => [n, []]));
  await withLoad(layout, undefined, async (rig) => {
    for (let run = 1; run <= SCALE_RUNS; run++)
      for (const n of SCALE_COUNTS) {
        const before = loadAverage();
        const f = await measure(rig, "svc", layout, n);
        figures.get(n)!.push(f);
        say(`  [sentinels] run ${run}/${SCALE_RUNS} ${n} sentinels, load ${before}: ${describe("svc", f)}`);
      }
  });
  const m = (n: number, key: keyof Figure) => median(figures.get(n)!.map((f) => f[key]));
  for (const line of table(
    ["sentinels stored", "delivered/s", "CPU µs per event", "CPU / 8 sentinels'"],
    SCALE_COUNTS.map((n) => [
      String(n),
      spread(figures.get(n)!.map((f) => f.rate)),
      spread(figures.get(n)!.map((f) => f.cpuUs)),
      ratio(m(n, "cpuUs"), m(8, "cpuUs")),
    ]),
  ))
    say(`  ${line}`);
  const big = SCALE_COUNTS.at(-1)!;
  say(
    `  target: ${big} sentinels <= 3x the CPU per event of 8: ${ratio(m(big, "cpuUs"), m(8, "cpuUs"))} ${verdict(m(big, "cpuUs") / m(8, "cpuUs"), 3)}`,
  );
  return SCALE_COUNTS.slice(1).map((n) => ({
    name: `peer scale (${layout.name}): svc CPU per event with ${n} sentinels stored`,
    value: m(n, "cpuUs"),
    unit: "µs",
    baseline: { name: "the same with 8 sentinels", value: m(8, "cpuUs") },
    targetRatio: 3,
    note: `${num(m(n, "rate"))} delivered/s vs ${num(m(8, "rate"))}/s with 8 (medians of ${SCALE_RUNS})`,
  }));
}

/** Restart time and RSS with 2,000 pending 256 KiB rows (the receiver hanging) beside an empty home. */
async function restart(): Promise<BenchLine[]> {
  say(
    "\n  restart: svc's start time and RSS (1.5 s after start) with 2,000 pending 256 KiB rows, beside an empty home (unpinned)",
  );
  const rx = await startReceiver();
  try {
    const seeded = await seedOutbox(rx.url);
    rx.hang = true;
    try {
      const d = await startDaemon(seeded.home);
      await new Promise((r) => setTimeout(r, 1_500));
      const rss = await rssMiB(d.pid);
      await d.stop();
      for (const line of table(
        ["home", "start ms", "RSS MiB"],
        [
          ["empty (one sentinel)", num(seeded.emptyStartMs), num(seeded.emptyRss)],
          ["2,000 pending 256 KiB rows", num(d.startMs), num(rss)],
        ],
      ))
        say(`  ${line}`);
      return [
        {
          name: "peer scale: svc start with 2,000 pending 256 KiB rows",
          value: d.startMs,
          unit: "ms",
          baseline: { name: "an empty home", value: seeded.emptyStartMs },
        },
        {
          name: "peer scale: svc RSS with 2,000 pending 256 KiB rows, deliveries in flight",
          value: rss,
          unit: "MiB",
          baseline: { name: "an empty home", value: seeded.emptyRss },
        },
      ];
    } finally {
      await rm(seeded.home, { recursive: true, force: true });
      untrackDir(seeded.home);
    }
  } finally {
    rx.hang = false;
    await rx.close();
  }
}

/** 100,000 events into one fresh svc at 8 sentinels: the rate of each successive 10,000. */
async function longRun(layout: Layout): Promise<BenchLine[]> {
  say(
    `\n  ${LONG_EVENTS.toLocaleString("en-US")} events (${layout.name}): svc at ${SENTINELS} sentinels, no warm-up; the rate of each successive 10,000`,
  );
  return withLoad(layout, undefined, async (rig) => {
    const sys = await startSvc(rig.rxUrl, SENTINELS, layout.system);
    try {
      const before = loadAverage();
      const c0 = await cpuOf(sys.pids);
      const r = await rig.load.call<{ ms: number; refused: number; marks: number[] }>("push", {
        ...sys.target,
        prefix: "long",
        n: LONG_EVENTS,
        sentinels: SENTINELS,
        markEvery: 10_000,
      });
      const cpuUs = (((await cpuOf(sys.pids)) - c0) * 1000) / LONG_EVENTS;
      const rates = r.marks.map((t, i) => 10_000_000 / (t - (r.marks[i - 1] ?? 0)));
      say(
        `  load before ${before}; ${num((LONG_EVENTS * 1000) / r.ms)} delivered/s overall, ${num(cpuUs)} µs CPU/event, ${r.refused} pushes refused (503) and sent again`,
      );
      say(`  delivered/s per 10,000: ${rates.map(num).join(", ")}`);
      return [
        {
          name: `peer scale (${layout.name}): svc ms per event, the last 10,000 of ${LONG_EVENTS.toLocaleString("en-US")}`,
          value: 1000 / rates.at(-1)!,
          unit: "ms",
          baseline: { name: "the median of the 10,000-event blocks", value: 1000 / median(rates) },
          note: `delivered/s per 10,000: ${rates.map(num).join(", ")}`,
        },
      ];
    } finally {
      await sys.stop();
    }
  });
}

async function versions(): Promise<string> {
  const v = async (p: string) =>
    (JSON.parse(await readFile(join(REPO_ROOT, "node_modules", p, "package.json"), "utf8")) as { version: string })
      .version;
  return `bullmq ${await v("bullmq")}, ioredis ${await v("ioredis")}`;
}

export const peer: BenchSuite = {
  name: "peer",
  async run(): Promise<BenchLine[]> {
    const started = performance.now();
    const noPinning = pinningUnavailable();
    const layouts = noPinning ? [UNPINNED] : [PINNED, UNPINNED];
    if (noPinning) say(`  no pinned layout: ${noPinning}; unpinned only`);
    const found = findRedis();
    const redis = "path" in found ? found.path : undefined;
    if ("missing" in found) say(`  the BullMQ peer is skipped: ${found.missing} (svc and raw POSTs still run)`);
    else
      say(
        `  peer: ${await versions()} on redis-server ${redisVersion(found.path)} (appendonly yes, appendfsync always); ` +
          `${INGEST === "separate" ? "the ingest (HTTP server enqueueing jobs) in its own process, as a web tier beside a worker tier is usually deployed (BENCH_PEER_INGEST=in-worker puts it in the worker's)" : "the ingest in the worker's process (BENCH_PEER_INGEST=in-worker)"}; ` +
          "its CPU is the worker's, the ingest's and redis-server's",
      );
    say(
      `  ${SENTINELS} webhook sentinels, ${EVENTS} timed events of ~575 bytes after ${WARMUP} untimed, 4 pushers of 64-event batches (503 retried after 100 ms), one local HTTPS receiver; raw: 16 in flight, each POST signed`,
    );
    const lines: BenchLine[] = [];
    for (const layout of layouts)
      if (SECTIONS.has(layout.name)) lines.push(...compareLines(layout, await compare(layout, redis)));
    const headline = layouts[0]!;
    if (SECTIONS.has("latency")) lines.push(...(await latency(headline, redis)));
    if (SECTIONS.has("sentinels")) lines.push(...(await sentinelScale(headline)));
    if (SECTIONS.has("restart")) lines.push(...(await restart()));
    if (SECTIONS.has("100k")) lines.push(...(await longRun(headline)));
    say(`\n  peer suite took ${((performance.now() - started) / 60_000).toFixed(1)} min`);
    return lines;
  },
};
