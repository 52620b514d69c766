/**
 * Test doubles for the webhook target: an in-memory sentinel engine (the plugin-facing
 * SentinelIngress), a plugin context on a temporary home offering the host egress (the same
 * service the daemon offers as "egress"), a fake Sleep that records waits, and a
 * challenge-echoing handler for real HTTPS receivers.
 */
import type { ServerResponse } from "node:http";
import type {
  DaemonEvent,
  DaemonEventSink,
  Egress,
  PluginContext,
  SentinelIngress,
  SentinelView,
} from "../../../../core/plugin-api/index.js";
import { FakeClock, createRandom, type Sleep } from "../../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../../core/runtime/logger.js";
import type { SeenRequest } from "../../../support/https-receiver.js";

export { startReceiver, LOOPBACK_ALLOWED, type Receiver, type SeenRequest } from "../../../support/https-receiver.js";

export interface FakeSentinels extends SentinelIngress {
  views: Map<string, SentinelView>;
  seen: Array<[string, string]>;
  expired: Set<string>;
  add(id: string, target: Record<string, unknown>, until?: SentinelView["spec"]["until"]): SentinelView;
}

export function fakeSentinels(): FakeSentinels {
  const views = new Map<string, SentinelView>();
  const seen: Array<[string, string]> = [];
  const expired = new Set<string>();
  return {
    views,
    seen,
    expired,
    add(id, target, until = { kind: "never" }) {
      const view: SentinelView = {
        id,
        status: "active",
        createdAt: 0,
        spec: { match: [{ subject: "s:1" }], until, target: target as SentinelView["spec"]["target"] },
      };
      views.set(id, view);
      return view;
    },
    async ingest() {
      return { accepted: 0, matched: [] };
    },
    async subjectTerminal() {},
    async markSeen(sentinelId, eventId) {
      seen.push([sentinelId, eventId]);
    },
    active: () => [...views.values()],
    get: (id) => views.get(id),
    async isExpiredNow(id) {
      return !views.has(id) || expired.has(id);
    },
    async updateStoredTarget(id, mutate) {
      const view = views.get(id)!;
      const next = await mutate(structuredClone(view.spec.target));
      const updated = { ...view, spec: { ...view.spec, target: { ...next, kind: view.spec.target.kind } } };
      views.set(id, updated);
      return updated;
    },
  };
}

/** A Sleep that resolves at once and records each wait. */
export function recordingSleep(): Sleep & { waits: number[] } {
  const waits: number[] = [];
  const sleep: Sleep = async (ms, signal) => {
    if (signal?.aborted) throw signal.reason;
    waits.push(ms);
  };
  return Object.assign(sleep, { waits });
}

/** A daemon event sink that keeps what was emitted. */
export function recordingEvents(): DaemonEventSink & { events: DaemonEvent[] } {
  const events: DaemonEvent[] = [];
  return { events, emit: (type, data) => void events.push({ type, data }) };
}

/** A plugin context whose host services are `sentinels` and, when given, `egress` and `events`. */
export function testContext(
  home: string,
  sentinels: SentinelIngress,
  opts: {
    clock?: FakeClock;
    sleep?: Sleep;
    config?: Record<string, unknown>;
    egress?: Egress;
    events?: DaemonEventSink;
    /** More host services (team mode: `teamDatabase`, `teamJobs`). */
    services?: Record<string, unknown>;
  } = {},
) {
  const clock = opts.clock ?? new FakeClock(Date.now());
  const logger = createMemoryLogger();
  const services: Record<string, unknown> = {
    sentinels,
    ...(opts.egress ? { egress: opts.egress } : {}),
    ...(opts.events ? { events: opts.events } : {}),
    ...opts.services,
  };
  const ctx: PluginContext = {
    type: "target",
    kind: "webhook",
    logger,
    clock,
    random: createRandom(clock),
    sleep: opts.sleep ?? recordingSleep(),
    home,
    storageDir: `${home}/plugins/target-webhook`,
    config: () => opts.config ?? {},
    service: ((name: string) => {
      if (!(name in services)) throw new Error(`no service ${name}`);
      return services[name];
    }) as PluginContext["service"],
    hasService: (name) => name in services,
  };
  return { ctx, clock, logger };
}

/** Answers the verification POST with its challenge, everything else with `fallback`. */
export function echoChallenge(
  fallback: (req: SeenRequest, res: ServerResponse) => void = (_r, res) => res.writeHead(200).end("ok"),
) {
  return (req: SeenRequest, res: ServerResponse) => {
    const text = req.body.toString("utf8");
    if (text.includes('"verification"')) {
      const { challenge } = JSON.parse(text) as { challenge: string };
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ challenge }));
      return;
    }
    fallback(req, res);
  };
}

export const secretOf = (fill: number, bytes = 32): string => `whsec_${Buffer.alloc(bytes, fill).toString("base64")}`;

/** Waits for a condition; the deadline only guards against a hang (no speed is checked). */
export async function waitFor(cond: () => boolean, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
