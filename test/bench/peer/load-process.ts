/**
 * The peer bench's load: the HTTPS receiver and the pushers, in a process of their own (pinned to
 * the other core than the system under test), driven by the suite over IPC.
 */
import { open, mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "undici";
import { buildEnvelope } from "../../../plugins/webhook-target/envelope.js";
import { benchEvent, type Pushable, pushAndDeliver, pushTo, SECRET, startReceiver, TLS } from "../webhook-rig.js";
import { serveParent } from "./ipc.js";
import { secretKey, signedHeaders } from "./sign.js";

const rx = await startReceiver();
const arrivals = new Map<string, number>();
let marks: number[] = [];
let markEvery = 0;
let armedAt = 0;
let lastArrival = 0;
rx.onDelivered = (id) => {
  const now = performance.now();
  lastArrival = now;
  arrivals.set(id, now);
  if (markEvery && rx.delivered.size % markEvery === 0) marks.push(now);
};

/** Pushes to each target in turn, batch by batch. */
function inTurn(targets: Array<{ url: string; token: string }>): Pushable {
  const pushables = targets.map((t) => pushTo(t.url, t.token));
  let next = 0;
  return { push: (events) => pushables[next++ % pushables.length]!.push(events) };
}

const sleepUntil = (t: number) => new Promise((r) => setTimeout(r, Math.max(0, t - performance.now())));

async function until(done: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** One direct delivery for the latency baseline: an fdatasync'd small append, then a signed POST. */
async function directDelivery(agent: Agent, log: Awaited<ReturnType<typeof open>>, id: string): Promise<void> {
  await log.write(`{"op":"accept","id":"${id}"}\n`);
  await log.datasync();
  const body = buildEnvelope("snt_bench", benchEvent(id, 0, 8), Date.now()).toString("utf8");
  const u = new URL(rx.url);
  const res = await agent.request({
    origin: u.origin,
    path: u.pathname,
    method: "POST",
    body,
    headers: signedHeaders(secretKey(SECRET), id, body),
  });
  await res.body.dump();
}

serveParent({
  async url() {
    return rx.url;
  },
  /**
   * Pushes `n` events through 4 pushers until the receiver has them all; the ms taken and, every
   * `markEvery` deliveries, when. With `spread`, the batches go to `url` and those targets in turn.
   */
  async push(req) {
    const { url, token, prefix, n, sentinels, spread } = req as unknown as {
      url: string;
      token: string;
      prefix: string;
      n: number;
      sentinels: number;
      spread?: Array<{ url: string; token: string }>;
    };
    markEvery = Number(req.markEvery ?? 0);
    marks = [];
    arrivals.clear();
    const t0 = performance.now();
    const refused = await pushAndDeliver(inTurn([{ url, token }, ...(spread ?? [])]), rx, prefix, n, sentinels);
    const ms = performance.now() - t0;
    markEvery = 0;
    return { ms, refused, marks: marks.map((m) => m - t0) };
  },
  /** Starts counting deliveries afresh (for raw POSTs, sent by another process). */
  async arm() {
    rx.delivered.clear();
    arrivals.clear();
    armedAt = performance.now();
    return null;
  },
  /** Waits until `n` deliveries arrived since `arm`; the ms from `arm` to the last. */
  async delivered(req) {
    const n = Number(req.n);
    await until(() => rx.delivered.size >= n, `${n} deliveries`, 600_000);
    return { ms: lastArrival - armedAt };
  },
  /**
   * One event every `intervalMs` (ids `<prefix>_<i>`), pushed to `url` (or, without it, delivered
   * directly after an fdatasync'd append); the ms from each push request's start to its arrival.
   */
  async latency(req) {
    const { url, token, prefix, n, intervalMs } = req as unknown as {
      url?: string;
      token?: string;
      prefix: string;
      n: number;
      intervalMs: number;
    };
    rx.delivered.clear();
    arrivals.clear();
    const starts = new Map<string, number>();
    const dir = await mkdtemp(join(tmpdir(), "svc-bench-latency-"));
    const log = await open(join(dir, "append.log"), "a");
    const agent = new Agent({ connect: { ca: await readFile(join(TLS, "ca.crt")) } });
    const target = url ? pushTo(url, token ?? "") : undefined;
    try {
      const sends: Promise<unknown>[] = [];
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        await sleepUntil(t0 + i * intervalMs);
        const id = `${prefix}_${i}`;
        starts.set(id, performance.now());
        sends.push(target ? target.push([benchEvent(id, i, 8, "bench:0")]) : directDelivery(agent, log, id));
      }
      await Promise.all(sends);
      await until(() => [...starts.keys()].every((id) => arrivals.has(id)), `${n} latency events`, 60_000);
      return [...starts].map(([id, t]) => arrivals.get(id)! - t);
    } finally {
      await log.close();
      await agent.close();
      await rm(dir, { recursive: true, force: true });
    }
  },
});
