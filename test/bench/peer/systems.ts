/**
 * The three systems the peer bench compares, each started fresh for a run on `cpus` (every one of
 * its processes pinned there with taskset, or unpinned): svc's daemon, the BullMQ peer (ingest,
 * worker, redis-server) and the raw poster. Each names the pids whose CPU counts as its own.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { SECRET, startWithSentinels, TLS } from "../webhook-rig.js";
import { spawnScript } from "./ipc.js";
import type { PeerStart } from "./bullmq-peer.js";
import { startRedis } from "./redis.js";

export interface System {
  /** The processes whose CPU is the system's. */
  pids: number[];
  /** Where events are pushed (4 pushers of 64-event batches); unset for the raw poster. */
  target?: { url: string; token: string };
  /** For the raw poster: POSTs `n` signed envelopes to `url`. */
  post?(url: string, n: number, prefix: string): Promise<void>;
  stop(): Promise<void>;
}

/** svc's daemon on a fresh home with `sentinels` webhook sentinels on `bench:<k>` delivering to `url`. */
export async function startSvc(url: string, sentinels: number, cpus?: string): Promise<System> {
  const d = await startWithSentinels(url, sentinels, cpus);
  return { pids: [d.pid], target: { url: `${d.base}/providers/agentpush/events`, token: d.token }, stop: d.stop };
}

export type IngestPlacement = "separate" | "in-worker";

/** The BullMQ peer: redis-server, and the ingest in its own process or in the worker's. */
export async function startPeer(
  redisPath: string,
  url: string,
  sentinels: number,
  placement: IngestPlacement,
  cpus?: string,
): Promise<System> {
  const redis = await startRedis(redisPath, cpus);
  const processes: Array<Awaited<ReturnType<typeof spawnScript>>> = [];
  const stop = async () => {
    for (const p of processes) await p.stop();
    await redis.stop();
  };
  try {
    const token = randomBytes(24).toString("base64url");
    const start: Omit<PeerStart, "role"> = {
      redisPort: redis.port,
      token,
      ca: join(TLS, "ca.crt"),
      subscriptions: Array.from({ length: sentinels }, (_, k) => ({
        id: `sub_${k}`,
        subject: `bench:${k}`,
        url,
        secret: SECRET,
      })),
    };
    let port: number | undefined;
    for (const role of placement === "separate" ? (["worker", "ingest"] as const) : (["both"] as const)) {
      const p = await spawnScript("bullmq-peer", cpus);
      processes.push(p);
      port = (await p.call<{ port?: number }>("start", { ...start, role })).port ?? port;
    }
    return {
      pids: [redis.pid, ...processes.map((p) => p.pid)],
      target: { url: `http://127.0.0.1:${port}/events`, token },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The raw poster: one process POSTing signed envelopes with undici, 16 in flight. */
export async function startRaw(cpus?: string): Promise<System> {
  const p = await spawnScript("raw-poster", cpus);
  return {
    pids: [p.pid],
    post: async (url, n, prefix) => void (await p.call("post", { url, n, prefix })),
    stop: () => p.stop(),
  };
}
