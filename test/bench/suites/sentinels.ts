/**
 * Sentinels: the indexed matcher's cost per event as sentinels grow from 10 to 10,000 (as
 * ratios to the 10-sentinel figure; a linear scan is shown beside it), events ingested per
 * second through agentpush into the real daemon with 1,000 active sentinels (beside 10), and
 * 100 concurrent `POST /sentinels` (session targets) into the real daemon: the p99 answer time
 * beside 100 concurrent `GET /health` and beside one create at a time (target: p99 under 1 s,
 * every create answered).
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SentinelIndex, subjectMatches, typeMatcher, type IndexedClause } from "../../../core/sentinels/matcher.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, median } from "../measure.js";
import { startBenchDaemon, writeBenchSentinels, type BenchDaemon } from "../daemon.js";

const FIXTURE = join(REPO_ROOT, "test/fixtures/packages/recording-target");

/** Sentinel i watches `s:i` exactly (9 in 10) or the prefix `p:i/*` (1 in 10), types `ci.*`. */
function clauses(n: number): IndexedClause[] {
  return Array.from({ length: n }, (_, i) => ({
    sentinelId: `snt_${i}`,
    subject: i % 10 ? `s:${i}` : `p:${i}/*`,
    types: ["ci.*"],
  }));
}

function events(n: number, count: number) {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => {
    const k = Math.floor(next() * n);
    return { type: "ci.build.done", subjects: [`p:${k}/`, `p:${k}/job`, `s:${k}`] };
  });
}

function nsPerEvent(
  match: (e: { type: string; subjects: string[] }) => unknown,
  evs: Array<{ type: string; subjects: string[] }>,
  rounds = 7,
): number {
  for (const e of evs) match(e);
  const runs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = process.hrtime.bigint();
    for (const e of evs) match(e);
    runs.push(Number(process.hrtime.bigint() - t0) / evs.length);
  }
  return median(runs);
}

function matcherLines(): BenchLine[] {
  const sizes = [10, 100, 1_000, 10_000];
  const figures = sizes.map((n) => {
    const index = new SentinelIndex();
    const cs = clauses(n);
    for (const c of cs) index.add(c.sentinelId, [c]);
    return nsPerEvent((e) => index.match(e), events(n, 20_000));
  });
  const cs = clauses(10_000);
  const compiled = cs.map((c) => ({ ...c, test: typeMatcher(c.types) }));
  const linear = nsPerEvent(
    (e) => compiled.filter((c) => e.subjects.some((s) => subjectMatches(c.subject, s)) && c.test(e.type)),
    events(10_000, 500),
    3,
  );
  const baseline = { name: "10 sentinels", value: figures[0]! };
  return [
    ...sizes.slice(1).map((n, i) => ({
      name: `matcher at ${n.toLocaleString("en")} sentinels`,
      value: figures[i + 1]!,
      unit: "ns/event",
      baseline,
      note: `a linear cost would be ${n / 10}x`,
    })),
    {
      name: "linear scan at 10,000 sentinels (reference, not used)",
      value: linear,
      unit: "ns/event",
      baseline,
      note: "median of 7 rounds of 20,000 events (3 x 500 for the linear scan); each event has 3 subjects",
    },
  ];
}

type Daemon = BenchDaemon;

async function startDaemon(dir: string, sentinels: number): Promise<Daemon> {
  const home = join(dir, `home-${sentinels}`);
  await writeBenchSentinels(home, sentinels, (i) => ({ kind: "recording", name: `b${i}`, ack: "now" }));
  await writeFile(join(home, "config.json"), JSON.stringify({ adapters: ["svc-recording-target"] }));
  return startBenchDaemon(home, { SVC_INSTALL_DIR: join(dir, "install") });
}

async function pushRate(d: Daemon, sentinels: number, total: number, batch: number, tag: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let sent = 0; sent < total; sent += batch) {
    const evs = Array.from({ length: batch }, (_, j) => ({
      id: `${tag}${sent + j}`,
      type: "ci.build.done",
      subjects: [`job:${(sent + j) % sentinels}`],
    }));
    const res = await fetch(`${d.base}/providers/agentpush/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
      body: JSON.stringify(batch === 1 ? evs[0] : evs),
    });
    if (!res.ok) throw new Error(`push: ${res.status} ${await res.text()}`);
    const r = (await res.json()) as { matched: unknown[] };
    if (r.matched.length !== batch) throw new Error(`push matched ${r.matched.length} of ${batch}`);
  }
  return total / (Number(process.hrtime.bigint() - t0) / 1e9);
}

/** The 99th percentile of `values` (nearest rank). */
function p99(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.ceil(s.length * 0.99) - 1]!;
}

/** Runs `n` requests made by `make(i)` at once; each one's answer time in ms, or NaN when unanswered within 15 s. */
async function concurrently(n: number, make: (i: number) => Promise<Response>): Promise<number[]> {
  return Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const t0 = process.hrtime.bigint();
      try {
        const res = await make(i);
        await res.arrayBuffer();
        return res.ok ? Number(process.hrtime.bigint() - t0) / 1e6 : Number.NaN;
      } catch {
        return Number.NaN;
      }
    }),
  );
}

const CREATES = 100;
const CREATE_ROUNDS = 3;

async function createLines(dir: string): Promise<BenchLine[]> {
  const d = await startDaemon(dir, 0);
  try {
    const headers = { authorization: `Bearer ${d.token}`, "content-type": "application/json" };
    let n = 0;
    const create = () => {
      const i = n++;
      const spec = {
        match: [{ subject: `load:${i}` }],
        until: { kind: "never" },
        target: { kind: "session", sessionId: `ses_bench${i}` },
      };
      return fetch(`${d.base}/sentinels`, {
        method: "POST",
        headers,
        body: JSON.stringify(spec),
        signal: AbortSignal.timeout(15_000),
      });
    };
    const health = () => fetch(`${d.base}/health`, { headers, signal: AbortSignal.timeout(15_000) });
    await concurrently(20, create);
    await concurrently(20, health);
    const rounds: Array<{ creates: number[]; gets: number[] }> = [];
    for (let r = 0; r < CREATE_ROUNDS; r++)
      rounds.push({ gets: await concurrently(CREATES, health), creates: await concurrently(CREATES, create) });
    const alone: number[] = [];
    for (let i = 0; i < CREATES; i++) alone.push(...(await concurrently(1, create)));
    const answered = rounds.map((r) => r.creates.filter((ms) => !Number.isNaN(ms)).length);
    const createP99 = median(rounds.map((r) => p99(r.creates.map((ms) => (Number.isNaN(ms) ? Infinity : ms)))));
    const getP99 = median(rounds.map((r) => p99(r.gets)));
    const target = `target: p99 under 1 s (${createP99 < 1_000 ? "met" : "NOT met"}); answered ${answered.map((a) => `${a}/${CREATES}`).join(", ")} in ${CREATE_ROUNDS} rounds`;
    const name = `${CREATES} concurrent POST /sentinels (session targets), p99`;
    return [
      {
        name,
        value: createP99,
        unit: "ms",
        baseline: { name: `${CREATES} concurrent GET /health, p99`, value: getP99 },
        note: `real daemon, median over ${CREATE_ROUNDS} rounds; ${target}`,
      },
      {
        name,
        value: createP99,
        unit: "ms",
        baseline: { name: `one create at a time, p99 of ${CREATES}`, value: p99(alone) },
        note: "one at a time, each create is one fsynced rewrite of sentinels.json; at once, creates share writes (group commit)",
      },
    ];
  } finally {
    await d.stop();
  }
}

async function daemonLines(): Promise<BenchLine[]> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-sentinels-"));
  try {
    await mkdir(join(dir, "install", "node_modules"), { recursive: true });
    await symlink(REPO_ROOT, join(dir, "install", "node_modules", "svc"), "junction");
    await cp(FIXTURE, join(dir, "install", "node_modules", "svc-recording-target"), { recursive: true });
    const creates = await createLines(dir);
    const out: Record<string, { single: number; batched: number }> = {};
    for (const n of [10, 1_000]) {
      const d = await startDaemon(dir, n);
      try {
        await pushRate(d, n, 50, 1, "warm");
        out[n] = { single: await pushRate(d, n, 300, 1, "one"), batched: await pushRate(d, n, 2_000, 100, "batch") };
      } finally {
        await d.stop();
      }
    }
    const note =
      "real daemon; recording-target fixture (fsynced append per delivery) plus the fsynced dedup write per delivery; each event matches one sentinel";
    return [
      {
        name: "agentpush, 1 event per push, 1,000 sentinels",
        value: out[1000]!.single,
        unit: "events/s",
        baseline: { name: "10 sentinels", value: out[10]!.single },
        note,
      },
      {
        name: "agentpush, 100 events per push, 1,000 sentinels",
        value: out[1000]!.batched,
        unit: "events/s",
        baseline: { name: "10 sentinels", value: out[10]!.batched },
      },
      ...creates,
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const sentinels: BenchSuite = {
  name: "sentinels",
  async run(): Promise<BenchLine[]> {
    return [...matcherLines(), ...(await daemonLines())];
  },
};
