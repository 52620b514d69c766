/**
 * The peer: what a Node team without svc would build on BullMQ 6 and Redis, in one of three roles.
 * - `ingest`: an HTTP server taking the same event batches as svc's agentpush (bearer token, JSON
 *   array), matching each event's subjects against the webhook subscriptions and enqueueing one job
 *   per match (`Queue.addBulk`; the job carries the envelope), answering 202 once Redis acknowledged
 *   (with `appendfsync always`, after the AOF write is fsynced).
 * - `worker`: a BullMQ Worker, concurrency 16, signing each delivery the Standard Webhooks way
 *   (node:crypto HMAC-SHA256 of `${id}.${ts}.${body}`) and POSTing it with undici; a non-2xx
 *   answer fails the job, retried with exponential backoff.
 * - `both`: the two in one process.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Queue, Worker } from "bullmq";
import { Agent } from "undici";
import { buildEnvelope } from "../../../plugins/webhook-target/envelope.js";
import { serveParent } from "./ipc.js";
import { secretKey, signedHeaders } from "./sign.js";

export interface PeerSubscription {
  id: string;
  subject: string;
  url: string;
  secret: string;
}

export interface PeerStart {
  role: "ingest" | "worker" | "both";
  redisPort: number;
  token: string;
  ca: string;
  subscriptions: PeerSubscription[];
}

const QUEUE = "deliveries";
interface DeliveryJob {
  subscription: string;
  eventId: string;
  body: string;
}
interface BenchEvent {
  id: string;
  subjects: string[];
  type: string;
  data: unknown;
}

const connection = (port: number) => ({ host: "127.0.0.1", port, maxRetriesPerRequest: null });

async function startIngest(start: PeerStart): Promise<number> {
  const bySubject = new Map<string, PeerSubscription[]>();
  for (const s of start.subscriptions) bySubject.set(s.subject, [...(bySubject.get(s.subject) ?? []), s]);
  const queue = new Queue<DeliveryJob>(QUEUE, {
    connection: connection(start.redisPort),
    defaultJobOptions: {
      attempts: 8,
      backoff: { type: "exponential", delay: 1000 },
      removeOnComplete: true,
      removeOnFail: 1000,
    },
  });
  const server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/events") return res.writeHead(404).end();
    if (req.headers.authorization !== `Bearer ${start.token}`) return res.writeHead(401).end();
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let events: BenchEvent[];
      try {
        events = JSON.parse(Buffer.concat(chunks).toString("utf8")) as BenchEvent[];
        if (!Array.isArray(events)) throw new Error("the body is not a JSON array of events");
      } catch (err) {
        return res.writeHead(400).end((err as Error).message);
      }
      const now = Date.now();
      const jobs = events.flatMap((event) =>
        event.subjects.flatMap((subject) =>
          (bySubject.get(subject) ?? []).map((s) => ({
            name: "deliver",
            data: { subscription: s.id, eventId: event.id, body: buildEnvelope(s.id, event, now).toString("utf8") },
          })),
        ),
      );
      queue.addBulk(jobs).then(
        () => res.writeHead(202, { "content-type": "application/json" }).end(JSON.stringify({ queued: jobs.length })),
        (err: Error) => res.writeHead(500).end(err.message),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return (server.address() as AddressInfo).port;
}

async function startWorker(start: PeerStart): Promise<void> {
  const subscriptions = new Map(start.subscriptions.map((s) => [s.id, { ...s, key: secretKey(s.secret) }]));
  const agent = new Agent({ connect: { ca: await readFile(start.ca) } });
  const worker = new Worker<DeliveryJob>(
    QUEUE,
    async (job) => {
      const s = subscriptions.get(job.data.subscription);
      if (!s) throw new Error(`no subscription ${job.data.subscription}`);
      const u = new URL(s.url);
      const res = await agent.request({
        origin: u.origin,
        path: u.pathname,
        method: "POST",
        body: job.data.body,
        headers: signedHeaders(s.key, job.data.eventId, job.data.body),
      });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode >= 300) throw new Error(`${s.url} answered ${res.statusCode}`);
    },
    { connection: connection(start.redisPort), concurrency: 16 },
  );
  await worker.waitUntilReady();
}

serveParent({
  async start(req) {
    const start = req as unknown as PeerStart;
    if (start.role !== "ingest") await startWorker(start);
    return { port: start.role === "worker" ? undefined : await startIngest(start) };
  },
});
