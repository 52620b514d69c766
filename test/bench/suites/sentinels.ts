/**
 * Sentinels: the indexed matcher's cost per event as sentinels grow from 10 to 10,000 (as
 * ratios to the 10-sentinel figure; a linear scan is shown beside it), and events ingested per
 * second through agentpush into the real daemon with 1,000 active sentinels (beside 10).
 */
import { spawn } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SentinelIndex, subjectMatches, typeMatcher, type IndexedClause } from "../../../core/sentinels/matcher.js";
import type { BenchLine, BenchSuite } from "../types.js";
import { REPO_ROOT, median } from "../measure.js";

const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");
const FIXTURE = join(REPO_ROOT, "test/fixtures/packages/recording-target");

/** Sentinel i watches `s:i` exactly (9 in 10) or the prefix `p:i/*` (1 in 10), types `ci.*`. */
function clauses(n: number): IndexedClause[] {
  return Array.from({ length: n }, (_, i) => ({ sentinelId: `snt_${i}`, subject: i % 10 ? `s:${i}` : `p:${i}/*`, types: ["ci.*"] }));
}

function events(n: number, count: number) {
  let seed = 42;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  return Array.from({ length: count }, () => {
    const k = Math.floor(next() * n);
    return { type: "ci.build.done", subjects: [`p:${k}/`, `p:${k}/job`, `s:${k}`] };
  });
}

function nsPerEvent(match: (e: { type: string; subjects: string[] }) => unknown, evs: Array<{ type: string; subjects: string[] }>, rounds = 7): number {
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
    ...sizes.slice(1).map((n, i) => ({ name: `matcher at ${n.toLocaleString("en")} sentinels`, value: figures[i + 1]!, unit: "ns/event", baseline, note: `a linear cost would be ${n / 10}x` })),
    { name: "linear scan at 10,000 sentinels (reference, not used)", value: linear, unit: "ns/event", baseline, note: "median of 7 rounds of 20,000 events (3 x 500 for the linear scan); each event has 3 subjects" },
  ];
}

interface Daemon {
  base: string;
  token: string;
  stop(): Promise<void>;
}

async function startDaemon(dir: string, sentinels: number): Promise<Daemon> {
  const home = join(dir, `home-${sentinels}`);
  await mkdir(home, { recursive: true });
  const now = Date.now();
  const records = Array.from({ length: sentinels }, (_, i) => ({
    id: `snt_bench${String(i).padStart(6, "0")}`,
    status: "active",
    createdAt: now,
    updatedAt: now,
    deliveredCount: 0,
    spec: { match: [{ subject: `job:${i}` }], until: { kind: "never" }, target: { kind: "recording", name: `b${i}`, ack: "now" }, provider: "agentpush" },
  }));
  await writeFile(join(home, "sentinels.json"), JSON.stringify({ version: 1, sentinels: records }));
  await writeFile(join(home, "config.json"), JSON.stringify({ adapters: ["svc-recording-target"] }));
  const env = { ...process.env, SVC_HOME: home, SVC_INSTALL_DIR: join(dir, "install"), SVC_LOG_LEVEL: "warn" };
  const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], { env, stdio: "ignore" });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const info = await readFile(join(home, "runtime.json"), "utf8").then(JSON.parse, () => undefined);
    if (info?.pid === child.pid) {
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      return { base: `http://127.0.0.1:${info.port}`, token: info.token, stop: async () => (child.kill("SIGTERM"), exited) };
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error("the daemon did not start");
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function pushRate(d: Daemon, sentinels: number, total: number, batch: number, tag: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  for (let sent = 0; sent < total; sent += batch) {
    const evs = Array.from({ length: batch }, (_, j) => ({ id: `${tag}${sent + j}`, type: "ci.build.done", subjects: [`job:${(sent + j) % sentinels}`] }));
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

async function ingestLines(): Promise<BenchLine[]> {
  const dir = await mkdtemp(join(tmpdir(), "svc-bench-sentinels-"));
  try {
    await mkdir(join(dir, "install", "node_modules"), { recursive: true });
    await symlink(REPO_ROOT, join(dir, "install", "node_modules", "svc"), "junction");
    await cp(FIXTURE, join(dir, "install", "node_modules", "svc-recording-target"), { recursive: true });
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
    const note = "real daemon; recording-target fixture (fsynced append per delivery) plus the fsynced dedup write per delivery; each event matches one sentinel";
    return [
      { name: "agentpush, 1 event per push, 1,000 sentinels", value: out[1000]!.single, unit: "events/s", baseline: { name: "10 sentinels", value: out[10]!.single }, note },
      { name: "agentpush, 100 events per push, 1,000 sentinels", value: out[1000]!.batched, unit: "events/s", baseline: { name: "10 sentinels", value: out[10]!.batched } },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const sentinels: BenchSuite = {
  name: "sentinels",
  async run(): Promise<BenchLine[]> {
    return [...matcherLines(), ...(await ingestLines())];
  },
};
