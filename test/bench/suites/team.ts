/**
 * Team mode beside the file store, in the same run: delivered events/s and CPU per delivered event
 * with one daemon on the file store, one daemon on PostgreSQL and two daemons on one PostgreSQL
 * (8 webhook sentinels, a local HTTPS receiver, 4 pushers of 64-event batches in a child process of
 * their own; the two daemons get the batches in turn), the systems alternating run by run; then
 * push-to-arrival p50/p99 at one event per 50 ms, file store beside one daemon on PostgreSQL. CPU
 * counts the daemons and, in team mode, the postgres processes (the postmaster and its backends,
 * from /proc). Each run starts on a fresh home and a fresh database. PostgreSQL is Debian's,
 * started by test/support/postgres.ts; without it the suite says so and reports nothing.
 * Settings: BENCH_TEAM_RUNS, BENCH_TEAM_EVENTS, BENCH_TEAM_WARMUP, BENCH_TEAM_LATENCY_EVENTS.
 */
import { randomBytes } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { postgresMissing, startPostgres, type PostgresServer } from "../../support/postgres.js";
import { trackDir, untrackDir } from "../children.js";
import { median } from "../measure.js";
import { spawnScript, type ChildScript } from "../peer/ipc.js";
import { loadAverage, num, quantile, ratio, say, spread, table } from "../peer/report.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { cpuMs, type Daemon, makeHome, startDaemon, webhookSpec } from "../webhook-rig.js";

const env = process.env;
const RUNS = Number(env.BENCH_TEAM_RUNS ?? 3);
const EVENTS = Number(env.BENCH_TEAM_EVENTS ?? 4_000);
const WARMUP = Number(env.BENCH_TEAM_WARMUP ?? 2_000);
const LATENCY_EVENTS = Number(env.BENCH_TEAM_LATENCY_EVENTS ?? 200);
const LATENCY_BLOCK = 50;
const LATENCY_INTERVAL_MS = 50;
const SENTINELS = 8;
/** Two daemons at least this many times one's delivered events/s, where the cores allow it. */
const SCALE_TARGET = 1.6;

type Kind = "file" | "team1" | "team2";
const KINDS: Kind[] = ["file", "team1", "team2"];
const LABEL: Record<Kind, string> = {
  file: "1 daemon, file store",
  team1: "1 daemon, PostgreSQL",
  team2: "2 daemons, one PostgreSQL",
};

interface Figure {
  rate: number;
  cpuUs: number;
  refused: number;
}

interface System {
  daemons: Daemon[];
  /** The CPU of every process of the system so far, ms. */
  cpu(): Promise<number>;
  stop(): Promise<void>;
}

/** CPU of the postmaster (with the backends it reaped) and of its live backends, ms. */
async function postgresCpu(server: PostgresServer): Promise<number> {
  const root = server.pid;
  if (root === undefined) return 0;
  let total = await cpuMs(root);
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    if (Number(stat.split(") ")[1]?.split(" ")[1]) === root) total += await cpuMs(Number(entry)).catch(() => 0);
  }
  return total;
}

let databases = 0;

/** `kind` on fresh homes (and a fresh database), with {@link SENTINELS} webhook sentinels created on the first daemon. */
async function startSystem(kind: Kind, server: PostgresServer, rxUrl: string): Promise<System> {
  const team =
    kind === "file"
      ? undefined
      : {
          SVC_STORE_URL: await server.createDatabase(`bench_team_${process.pid}_${++databases}`),
          SVC_STORE_KEY: randomBytes(32).toString("base64"),
        };
  const homes: string[] = [];
  const daemons: Daemon[] = [];
  const stop = async () => {
    for (const d of daemons) await d.stop();
    for (const home of homes) {
      await rm(home, { recursive: true, force: true });
      untrackDir(home);
    }
  };
  try {
    for (let i = 0; i < (kind === "team2" ? 2 : 1); i++) {
      homes.push(await makeHome());
      daemons.push(await startDaemon(homes[i]!, { env: team }));
    }
    for (let k = 0; k < SENTINELS; k++) await daemons[0]!.call("POST", "/sentinels", webhookSpec(rxUrl, `bench:${k}`));
    // The second daemon hears of the sentinels through PostgreSQL: wait until it lists them all.
    const deadline = Date.now() + 60_000;
    for (const d of daemons.slice(1))
      while ((await d.call<{ sentinels: unknown[] }>("GET", "/sentinels")).sentinels.length < SENTINELS) {
        if (Date.now() > deadline)
          throw new Error("the second daemon did not list the first one's sentinels within 60 s: is team mode on?");
        await new Promise((r) => setTimeout(r, 20));
      }
  } catch (err) {
    await stop();
    throw err;
  }
  const cpu = async () => {
    let total = team ? await postgresCpu(server) : 0;
    for (const d of daemons) total += await cpuMs(d.pid);
    return total;
  };
  return { daemons, cpu, stop };
}

const targetOf = (d: Daemon) => ({ url: `${d.base}/providers/agentpush/events`, token: d.token });

/** Pushes `n` events spread over the system's daemons until the receiver has them all. */
function push(load: ChildScript, sys: System, prefix: string, n: number) {
  const [first, ...rest] = sys.daemons.map(targetOf);
  return load.call<{ ms: number; refused: number }>("push", {
    ...first,
    spread: rest,
    prefix,
    n,
    sentinels: SENTINELS,
  });
}

async function measure(load: ChildScript, kind: Kind, server: PostgresServer, rxUrl: string): Promise<Figure> {
  const sys = await startSystem(kind, server, rxUrl);
  try {
    await push(load, sys, "warm", WARMUP);
    const c0 = await sys.cpu();
    const r = await push(load, sys, "evt", EVENTS);
    const c1 = await sys.cpu();
    return { rate: (EVENTS * 1000) / r.ms, cpuUs: ((c1 - c0) * 1000) / EVENTS, refused: r.refused };
  } finally {
    await sys.stop();
  }
}

async function throughput(load: ChildScript, server: PostgresServer, rxUrl: string): Promise<Record<Kind, Figure[]>> {
  say(
    `\n  throughput: ${SENTINELS} webhook sentinels, ${WARMUP} untimed then ${EVENTS} timed events of about 575 bytes per run, 4 pushers of 64-event batches; ${RUNS} runs each, alternating`,
  );
  const figures: Record<Kind, Figure[]> = { file: [], team1: [], team2: [] };
  for (let run = 1; run <= RUNS; run++)
    for (const kind of KINDS) {
      const before = loadAverage();
      const f = await measure(load, kind, server, rxUrl);
      figures[kind].push(f);
      say(
        `  [throughput] run ${run}/${RUNS} ${LABEL[kind].padEnd(26)} load ${before}: ${num(f.rate)} delivered/s, ${num(f.cpuUs)} µs CPU/event${f.refused ? `, ${f.refused} pushes refused (503) and sent again` : ""}`,
      );
    }
  const m = (kind: Kind, key: keyof Figure) => median(figures[kind].map((f) => f[key]));
  for (const line of table(
    ["system", "delivered/s", "CPU µs per event", "CPU / file store's"],
    KINDS.map((kind) => [
      LABEL[kind],
      spread(figures[kind].map((f) => f.rate)),
      spread(figures[kind].map((f) => f.cpuUs)),
      ratio(m(kind, "cpuUs"), m("file", "cpuUs")),
    ]),
  ))
    say(`  ${line}`);
  return figures;
}

async function latency(load: ChildScript, server: PostgresServer, rxUrl: string): Promise<Record<string, number[]>> {
  say(
    `\n  latency: one event every ${LATENCY_INTERVAL_MS} ms, ${LATENCY_EVENTS} per system in blocks of ${LATENCY_BLOCK}, alternating; from the push request's start to the receiver's arrival`,
  );
  const kinds: Kind[] = ["file", "team1"];
  const systems = new Map<Kind, System>();
  const samples: Record<string, number[]> = { file: [], team1: [] };
  try {
    for (const kind of kinds) {
      const sys = await startSystem(kind, server, rxUrl);
      systems.set(kind, sys);
      await push(load, sys, "warm", 1_000);
      await load.call("latency", { ...targetOf(sys.daemons[0]!), prefix: `latwarm-${kind}`, n: 20, intervalMs: 50 });
    }
    for (let b = 0; b * LATENCY_BLOCK < LATENCY_EVENTS; b++) {
      const before = loadAverage();
      const block: string[] = [];
      for (const kind of kinds) {
        const ms = await load.call<number[]>("latency", {
          ...targetOf(systems.get(kind)!.daemons[0]!),
          prefix: `lat${b}-${kind}`,
          n: LATENCY_BLOCK,
          intervalMs: LATENCY_INTERVAL_MS,
        });
        samples[kind]!.push(...ms);
        block.push(`${LABEL[kind]} ${num(quantile(ms, 0.5))}/${num(quantile(ms, 0.99))}`);
      }
      say(`  [latency] block ${b + 1}, load ${before}: p50/p99 ms ${block.join(", ")}`);
    }
  } finally {
    for (const sys of systems.values()) await sys.stop();
  }
  return samples;
}

export const team: BenchSuite = {
  name: "team",
  async run(): Promise<BenchLine[]> {
    const missing = postgresMissing();
    if (missing) {
      say(`  ${missing}`);
      return [];
    }
    const server = await startPostgres();
    trackDir(server.dir);
    const load = await spawnScript("load-process");
    try {
      const rxUrl = await load.call<string>("url");
      const f = await throughput(load, server, rxUrl);
      const lat = await latency(load, server, rxUrl);
      const m = (kind: Kind, key: keyof Figure) => median(f[kind].map((x) => x[key]));
      const cores = availableParallelism();
      const scale = m("team2", "rate") / m("team1", "rate");
      const canShow = cores >= 4;
      say(
        `  target: two daemons >= ${SCALE_TARGET}x one daemon's delivered events/s, on machines with the cores to show it: ${ratio(m("team2", "rate"), m("team1", "rate"))}${canShow ? (scale >= SCALE_TARGET ? " (met)" : " (NOT met)") : ` (this machine has ${cores} cores, shared by the daemons, PostgreSQL, the pushers and the receiver: it cannot show it; CPU per event beside the file store instead)`}`,
      );
      const p = (kind: string, q: number) => quantile(lat[kind]!, q);
      return [
        {
          name: "team: two daemons on one PostgreSQL, delivered events/s",
          value: m("team2", "rate"),
          unit: "events/s",
          baseline: { name: "one daemon on PostgreSQL", value: m("team1", "rate") },
          note: `target >= ${SCALE_TARGET}x with the cores to show it (${cores} here${canShow ? "" : ": too few, see CPU per event"}); the file store: ${num(m("file", "rate"))} events/s`,
        },
        {
          name: "team: CPU per delivered event, one daemon on PostgreSQL (daemon + postgres)",
          value: m("team1", "cpuUs"),
          unit: "µs",
          baseline: { name: "one daemon on the file store", value: m("file", "cpuUs") },
        },
        {
          name: "team: CPU per delivered event, two daemons on one PostgreSQL (daemons + postgres)",
          value: m("team2", "cpuUs"),
          unit: "µs",
          baseline: { name: "one daemon on the file store", value: m("file", "cpuUs") },
        },
        {
          name: `team: push to arrival p50, one daemon on PostgreSQL, one event per ${LATENCY_INTERVAL_MS} ms`,
          value: p("team1", 0.5),
          unit: "ms",
          baseline: { name: "the file store", value: p("file", 0.5) },
        },
        {
          name: "team: push to arrival p99, one daemon on PostgreSQL",
          value: p("team1", 0.99),
          unit: "ms",
          baseline: { name: "the file store", value: p("file", 0.99) },
        },
      ];
    } finally {
      await load.stop();
      await server.destroy();
      untrackDir(server.dir);
    }
  },
};
