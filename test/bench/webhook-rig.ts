/**
 * The webhook benches' shared rig: a local HTTPS receiver that counts deliveries by `webhook-id`,
 * the real daemon (optionally pinned to CPUs with `taskset`), homes seeded with webhook sentinels or
 * pending outbox rows, the pushers (4 of 64-event batches, 503 retried after 100 ms) and the CPU and
 * RSS of a process from /proc. Used by the `webhook` and `peer` suites.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Outbox } from "../../plugins/webhook-target/outbox/outbox.js";
import { buildEnvelope } from "../../plugins/webhook-target/envelope.js";
import { trackChild, trackDir, untrackDir } from "./children.js";
import { Agent } from "undici";
import { REPO_ROOT } from "./measure.js";

export const CLI = join(REPO_ROOT, "dist/core/cli/svc.js");
export const TLS = join(REPO_ROOT, "test/fixtures/tls");
/** Extra node flags for the daemon under test, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile it. */
const DAEMON_NODE_ARGS = (process.env.BENCH_DAEMON_NODE_ARGS ?? "").split(" ").filter(Boolean);
export const SECRET = `whsec_${Buffer.alloc(32, 9).toString("base64")}`;
export const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/** `[command, args]` that runs `command args` on `cpus` (a `taskset -c` list), or as is when `cpus` is unset. */
export function pinned(cpus: string | undefined, command: string, args: string[]): [string, string[]] {
  return cpus === undefined ? [command, args] : ["taskset", ["-c", cpus, command, ...args]];
}

export interface Receiver {
  url: string;
  delivered: Set<string>;
  hang: boolean;
  /** Called with each newly delivered `webhook-id`, when set. */
  onDelivered?: (id: string) => void;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const delivered = new Set<string>();
  const state: { hang: boolean; onDelivered?: (id: string) => void } = { hang: false };
  const server: Server = createServer(
    { key: await readFile(join(TLS, "server.key")), cert: await readFile(join(TLS, "server.crt")) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (text.startsWith('{"type":"verification"'))
          return res
            .writeHead(200, { "content-type": "application/json" })
            .end(JSON.stringify({ challenge: JSON.parse(text).challenge }));
        if (state.hang) return;
        const id = req.headers["webhook-id"];
        if (typeof id === "string" && !delivered.has(id)) {
          delivered.add(id);
          state.onDelivered?.(id);
        }
        res.writeHead(200).end();
      });
    },
  );
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    delivered,
    get hang() {
      return state.hang;
    },
    set hang(v: boolean) {
      state.hang = v;
    },
    get onDelivered() {
      return state.onDelivered;
    },
    set onDelivered(f: ((id: string) => void) | undefined) {
      state.onDelivered = f;
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Something events are pushed to: resolves with the status (2xx, or 503 when it is full: push again). */
export interface Pushable {
  push(events: unknown[]): Promise<number>;
}

/** The pushers' connections, kept alive across pushes (closed by idling out, so the bench can exit). */
const pushAgent = new Agent({ keepAliveTimeout: 2_000 });

/** A {@link Pushable} that POSTs event batches as JSON to `url` with a bearer token. */

export function pushTo(url: string, token: string): Pushable {
  const target = new URL(url);
  return {
    async push(events) {
      // undici's request on a keep-alive pool, the client of the raw and direct baselines too (fetch
      // adds about a millisecond of its own to each push, which would count as svc's latency).
      const res = await pushAgent.request({
        origin: target.origin,
        path: target.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(events),
      });
      const text = await res.body.text();
      if (res.statusCode >= 300 && res.statusCode !== 503)
        throw new Error(`push to ${url}: ${res.statusCode} ${text.slice(0, 500)}`);
      return res.statusCode;
    },
  };
}

export interface Daemon extends Pushable {
  pid: number;
  base: string;
  token: string;
  startMs: number;
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  stop(): Promise<void>;
}

export interface DaemonOptions {
  /** taskset CPU list for the daemon (unpinned without it). */
  cpus?: string;
  /** Node flags for this daemon, after BENCH_DAEMON_NODE_ARGS. */
  nodeArgs?: string[];
  /** Receives the daemon's stdout (ignored without it). */
  onStdout?: (text: string) => void;
  /** Extra environment (e.g. SVC_STORE_URL and SVC_STORE_KEY for team mode). */
  env?: NodeJS.ProcessEnv;
}

/** `svc serve --port 0` on `home` (on `cpus` with taskset when given), found through its runtime.json. */
export async function startDaemon(home: string, cpusOrOptions?: string | DaemonOptions): Promise<Daemon> {
  const options = typeof cpusOrOptions === "string" ? { cpus: cpusOrOptions } : (cpusOrOptions ?? {});
  const t0 = Date.now();
  const env = {
    ...process.env,
    SVC_HOME: home,
    SVC_LOG_LEVEL: "error",
    NODE_EXTRA_CA_CERTS: join(TLS, "ca.crt"),
    ...options.env,
  };
  const nodeArgs = [...DAEMON_NODE_ARGS, ...(options.nodeArgs ?? [])];
  const [command, args] = pinned(options.cpus, process.execPath, [...nodeArgs, CLI, "serve", "--port", "0"]);
  const child = trackChild(
    spawn(command, args, { env, stdio: ["ignore", options.onStdout ? "pipe" : "ignore", "ignore"] }),
  );
  if (options.onStdout) child.stdout!.setEncoding("utf8").on("data", options.onStdout);
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => (child.kill("SIGTERM"), exited);
  for (;;) {
    const info = await readFile(join(home, "runtime.json"), "utf8").then(JSON.parse, () => undefined);
    if (info?.pid === child.pid) {
      const base = `http://127.0.0.1:${info.port}`;
      const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
        const res = await fetch(base + path, {
          method,
          headers: { authorization: `Bearer ${info.token}`, "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
        return (await res.json()) as T;
      };
      const { push } = pushTo(`${base}/providers/agentpush/events`, info.token);
      return { pid: child.pid!, base, token: info.token, startMs: Date.now() - t0, call, push, stop };
    }
    if (child.exitCode !== null || Date.now() - t0 > 60_000) {
      await stop();
      throw new Error(`the daemon on ${home} did not start within 60 s (exit code ${child.exitCode})`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

let clockTicks: number | undefined;
/** The kernel's clock ticks per second (`getconf CLK_TCK`), the unit of /proc/<pid>/stat's CPU times. */
function ticksPerSecond(): number {
  clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  return clockTicks;
}

/**
 * User + system CPU time of a process so far (all its threads, and its children it waited for), in
 * ms, from /proc/<pid>/stat.
 */
export async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  return (ticks * 1000) / ticksPerSecond();
}

export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

export async function makeHome(): Promise<string> {
  const home = trackDir(await mkdtemp(join(tmpdir(), "svc-bench-webhook-")));
  await writeFile(join(home, "config.json"), JSON.stringify({ webhooks: { allowSubnets: ["127.0.0.0/8"] } }));
  return home;
}

/** A webhook sentinel's spec: agentpush events on `subject`, delivered to `url` signed with {@link SECRET}. */
export const webhookSpec = (url: string, subject: string) => ({
  match: [{ subject }],
  until: { kind: "never" },
  provider: "agentpush",
  target: { kind: "webhook", url, secret: SECRET },
});

/** The bench's event `i` (about 575 bytes as an envelope): on `subject`, or on `bench:<i mod sentinels>`. */
export function benchEvent(id: string, i: number, sentinels: number, subject?: string) {
  return {
    id,
    type: "bench.event.made",
    subjects: [subject ?? `bench:${i % sentinels}`],
    data: { i, pad: "x".repeat(400) },
  };
}

/** Pushes `n` events (ids `<prefix>_<i>`, spread over the sentinels' subjects, or all on `subject`) with 4 pushers of 64-event batches, and waits until the receiver saw them all. Returns the pushes refused (503) and sent again. */
export async function pushAndDeliver(
  d: Pushable,
  rx: Pick<Receiver, "delivered">,
  prefix: string,
  n: number,
  sentinels: number,
  subject?: string,
): Promise<number> {
  rx.delivered.clear();
  let sent = 0;
  let refused = 0;
  const pusher = async () => {
    while (sent < n) {
      const batch = Array.from({ length: Math.min(64, n - sent) }, () => {
        const i = sent++;
        return benchEvent(`${prefix}_${i}`, i, sentinels, subject);
      });
      // 503 is the outbox's backpressure (full of pending rows): push the batch again shortly, as
      // the error says; events it did accept are duplicates the second time.
      while ((await d.push(batch)) === 503) {
        refused++;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, pusher));
  while (rx.delivered.size < n) await new Promise((r) => setTimeout(r, 5));
  return refused;
}

/**
 * Stores `n` webhook sentinels (subjects `bench:<k>`, delivering to `url`): one created through the
 * daemon (challenge, vault), the others copies of its record with their own ids and subjects, sharing
 * its secret, written while the daemon is stopped (creating 10,000 through the API would measure
 * creation instead). Returns the daemon started on that home (on `cpus` when given).
 */
export async function seedSentinels(home: string, url: string, n: number, cpus?: string): Promise<Daemon> {
  const first = await startDaemon(home, cpus);
  try {
    await first.call("POST", "/sentinels", webhookSpec(url, "bench:0"));
  } finally {
    await first.stop();
  }
  const file = join(home, "sentinels.json");
  const stored = JSON.parse(await readFile(file, "utf8")) as {
    version: 1;
    sentinels: Array<{ id: string; spec: { match: Array<{ subject: string }> } }>;
  };
  const original = stored.sentinels[0]!;
  const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  for (let k = 1; k < n; k++) {
    // The original's time and first random part, then k in its last 10 characters.
    const tail = Array.from({ length: 10 }, (_, i) => crockford[Math.floor(k / 32 ** (9 - i)) % 32]).join("");
    stored.sentinels.push({
      ...original,
      id: `snt_${original.id.slice(4, 20)}${tail}`,
      spec: { ...original.spec, match: [{ subject: `bench:${k}` }] },
    });
  }
  await writeFile(file, JSON.stringify(stored));
  return startDaemon(home, cpus);
}

/** Sentinels created through the API one by one; beyond this the home is seeded with copies of one (see {@link seedSentinels}). */
const CREATED_THROUGH_API = 64;

/**
 * The daemon (on `cpus` when given) on a fresh home with `n` webhook sentinels on `bench:<k>`
 * delivering to `url`; its `stop` also removes the home.
 */
export async function startWithSentinels(url: string, n: number, cpus?: string): Promise<Daemon> {
  const home = await makeHome();
  const d = n > CREATED_THROUGH_API ? await seedSentinels(home, url, n, cpus) : await startDaemon(home, cpus);
  const stop = async () => {
    await d.stop();
    await rm(home, { recursive: true, force: true });
    untrackDir(home);
  };
  try {
    if (n <= CREATED_THROUGH_API)
      for (let k = 0; k < n; k++) await d.call("POST", "/sentinels", webhookSpec(url, `bench:${k}`));
  } catch (err) {
    await stop();
    throw err;
  }
  return { ...d, stop };
}

/**
 * Seeds 2,000 pending 256 KiB rows for one sentinel delivering to `url` (created through the daemon,
 * which is then stopped); with the same daemon's start time and RSS on that home before the rows.
 */
export async function seedOutbox(url: string): Promise<{ home: string; emptyStartMs: number; emptyRss: number }> {
  const home = await makeHome();
  const d = await startDaemon(home);
  let id: string;
  let emptyRss: number;
  try {
    ({ id } = await d.call<{ id: string }>("POST", "/sentinels", webhookSpec(url, "bench:seed")));
    await new Promise((r) => setTimeout(r, 500));
    emptyRss = await rssMiB(d.pid);
  } finally {
    await d.stop();
  }
  const again = await startDaemon(home);
  const emptyStartMs = again.startMs;
  await again.stop();
  let n = 0;
  const outbox = await Outbox.open({
    home,
    now: Date.now,
    newId: () => `req_bench${String(n++).padStart(6, "0")}`,
    logger: silent,
  });
  const pad = "y".repeat(262_144 - 400);
  for (let b = 0; b < 2_000; b += 100) {
    await Promise.all(
      Array.from({ length: 100 }, (_, k) => {
        const eventId = `evt_seed_${b + k}`;
        return outbox.add({
          sentinelId: id,
          eventId,
          body: buildEnvelope(
            id,
            { id: eventId, type: "bench.seed.made", subjects: ["bench:seed"], data: pad },
            Date.now(),
          ),
        });
      }),
    );
  }
  await outbox.close();
  return { home, emptyStartMs, emptyRss };
}

/** POSTs `body` `n` times to `url` through `agent`, 16 in flight, with `headers(i)` on POST `i`; a non-2xx answer is an error. */
export async function postConcurrently(
  agent: Agent,
  url: string,
  n: number,
  body: Buffer | string,
  headers: (i: number) => Record<string, string>,
): Promise<void> {
  const u = new URL(url);
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const res = await agent.request({
        origin: u.origin,
        path: u.pathname,
        method: "POST",
        body,
        headers: headers(next++),
      });
      await res.body.dump();
      if (res.statusCode >= 300) throw new Error(`${url} answered ${res.statusCode}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}
