/**
 * An in-process sentinel engine on a temporary SVC_HOME with a fake clock, a manual ticker,
 * a memory logger and test plugins added to the registry directly (no loader involved).
 */
import type { DependencyContainer } from "tsyringe";
import type { DaemonModule } from "../../../core/daemon/module.js";
import { z } from "zod";
import { createContainer } from "../../../core/container.js";
import {
  defineProvider,
  defineTarget,
  type AnyPlugin,
  type SvcEvent,
  type TargetAck,
  type TargetDelivery,
  type SentinelView,
} from "../../../core/plugin-api/index.js";
import { FakeClock } from "../../../core/runtime/clock.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { registerValue } from "../../../core/runtime/inject.js";
import { DAEMON_EVENTS, PLUGINS, resolve } from "../../../core/tokens.js";
import { sentinelsModule } from "../../../core/sentinels/module.js";
import { SENTINEL_TICKER } from "../../../core/sentinels/tokens.js";
import { ManualTicker } from "../../../core/sentinels/ticker.js";
import type { SentinelEngine } from "../../../core/sentinels/engine.js";
import { SENTINELS } from "../../../core/tokens.js";
import type { StampedEvent } from "../../../core/daemon/event-bus.js";
import routineTarget from "../../../plugins/routine-target/index.js";
import agentpush from "../../../plugins/agentpush/index.js";

export interface Delivered {
  sentinelId: string;
  event: SvcEvent;
}

/** What the in-process test target and provider record. */
export interface Recorder {
  delivered: Delivered[];
  hooks: string[];
  /** `now` by default; `deferred` makes the target keep the event until markSeen. */
  ack: TargetAck["ack"];
  failNext: number;
  /** Runs inside deliver (e.g. to advance the clock mid-batch). */
  onDeliver?: (d: Delivered) => void | Promise<void>;
  polls: number;
  watched: string[];
  /** Gives the test target `deliverMany` (set before the harness starts). */
  batching?: boolean;
  /** Sizes of the runs handed to `deliverMany`. */
  runs: number[];
  /** Makes the next `deliverMany` calls reject as a whole. */
  failRuns?: number;
}

export function testPlugins(rec: Recorder): AnyPlugin[] {
  const deliver = async ({ sentinel, event }: TargetDelivery): Promise<TargetAck> => {
    if (rec.failNext > 0) {
      rec.failNext--;
      throw new Error("target is down");
    }
    const d = { sentinelId: sentinel.id, event };
    rec.delivered.push(d);
    await rec.onDeliver?.(d);
    return { ack: rec.ack };
  };
  const target = defineTarget({
    kind: "test",
    setup: () => ({
      inputSchema: z.strictObject({ kind: z.literal("test"), name: z.string().min(1), secret: z.string().optional() }),
      async create(input, meta) {
        if (input.name === "refuse") throw new Error("refused by target");
        rec.hooks.push(`create:${meta.sentinelId}:${meta.principal}`);
        return { kind: "test", name: input.name, ...(input.secret ? { secretRef: "ref_1" } : {}) };
      },
      project: (stored) => ({ kind: "test", name: stored.name, hasSecret: "secretRef" in stored }),
      deliver,
      ...(rec.batching
        ? {
            async deliverMany(deliveries: TargetDelivery[]) {
              rec.runs.push(deliveries.length);
              if (rec.failRuns) {
                rec.failRuns--;
                throw new Error("target is unreachable");
              }
              return Promise.allSettled(deliveries.map(deliver));
            },
          }
        : {}),
      async removed(s: SentinelView) {
        rec.hooks.push(`removed:${s.id}`);
      },
      async expired(s: SentinelView) {
        rec.hooks.push(`expired:${s.id}`);
      },
      async status(s: SentinelView) {
        return { rows: rec.delivered.filter((d) => d.sentinelId === s.id).length };
      },
    }),
  });
  const provider = defineProvider({
    kind: "local-gh",
    setup: () => ({
      defaultTypes: (subject: string) =>
        subject.includes("#") ? ["github.pull_request.*", "github.review.*"] : ["github.*"],
      readiness: async () => ({ ready: false, detail: "gh is not on PATH" }),
      resolveSubject(input: { subject?: string }) {
        if (input.subject?.includes(" ")) throw new Error("subjects have no spaces");
        return input.subject!.toLowerCase();
      },
      async configure(input: Record<string, unknown>) {
        return { configured: Object.keys(input) };
      },
      async watch(s: SentinelView) {
        rec.watched.push(s.id);
        rec.hooks.push(`watch:${s.id}`);
      },
      async unwatch(s: SentinelView) {
        rec.hooks.push(`unwatch:${s.id}`);
      },
      async pollNow() {
        rec.polls++;
      },
      terminalSubjects: (e: SvcEvent) => (e.type === "github.pull_request.closed" ? [e.subjects.at(-1)!] : []),
    }),
  });
  return [target, provider, routineTarget, agentpush];
}

export interface Harness {
  c: DependencyContainer;
  engine: SentinelEngine;
  clock: FakeClock;
  ticker: ManualTicker;
  rec: Recorder;
  logs: string[];
  daemonEvents: StampedEvent[];
  stop(): Promise<void>;
}

export function newRecorder(): Recorder {
  return { delivered: [], hooks: [], ack: "now", failNext: 0, polls: 0, watched: [], runs: [] };
}

/**
 * Starts the sentinels module on `home` (call again on the same home to simulate a restart);
 * `before` sees the container first (host services of the test's own).
 */
export async function startHarness(
  home: string,
  opts: {
    clock?: FakeClock;
    rec?: Recorder;
    plugins?: (rec: Recorder) => AnyPlugin[];
    before?: (c: DependencyContainer) => void;
    /** The daemon's environment (e.g. SVC_STORE_URL for team mode). */
    env?: NodeJS.ProcessEnv;
    /** Modules started before the sentinels module, stopped after it (e.g. the store module). */
    modules?: DaemonModule[];
  } = {},
): Promise<Harness> {
  const clock = opts.clock ?? new FakeClock();
  const rec = opts.rec ?? newRecorder();
  const logger = createMemoryLogger();
  const c = await createContainer({ home, env: opts.env ?? {}, clock, logger });
  for (const m of opts.modules ?? []) await m.start(c);
  const ticker = new ManualTicker();
  registerValue(c, SENTINEL_TICKER, ticker);
  const registry = resolve(c, PLUGINS);
  for (const definition of (opts.plugins ?? testPlugins)(rec)) {
    registry.add({
      type: definition.type,
      kind: definition.kind,
      definition,
      source: { package: "test", builtin: false, resolvedFrom: "cwd", dir: home },
    });
  }
  const daemonEvents: StampedEvent[] = [];
  resolve(c, DAEMON_EVENTS).subscribe((e) => daemonEvents.push(e));
  opts.before?.(c);
  await sentinelsModule.start(c);
  const engine = resolve(c, SENTINELS) as SentinelEngine;
  const stop = async () => {
    await sentinelsModule.stop!(c);
    for (const m of [...(opts.modules ?? [])].reverse()) await m.stop?.(c);
  };
  return { c, engine, clock, ticker, rec, logs: logger.lines, daemonEvents, stop };
}

export const spec = (subject: string | string[], extra: Record<string, unknown> = {}) => ({
  match: (Array.isArray(subject) ? subject : [subject]).map((s) => ({ subject: s })),
  until: { kind: "never" },
  target: { kind: "test", name: "t1" },
  provider: "agentpush",
  ...extra,
});

export const ev = (id: string, subjects: string[], type = "ci.build.finished"): SvcEvent => ({ id, type, subjects });

/**
 * The daemon in-process (real HTTP server, real routes and auth) with the fake clock, the
 * manual ticker and the test plugins: for the time rules over HTTP without real waiting.
 */
export async function startTestDaemon(
  home: string,
  opts: { clock?: FakeClock; rec?: Recorder; plugins?: (rec: Recorder) => AnyPlugin[] } = {},
) {
  const { startDaemon } = await import("../../../core/daemon/daemon.js");
  const { coreRoutesModule } = await import("../../../core/daemon/core-routes.js");
  const clock = opts.clock ?? new FakeClock();
  const rec = opts.rec ?? newRecorder();
  const ticker = new ManualTicker();
  const logger = createMemoryLogger();
  const setup = {
    name: "test-plugins",
    async start(c: DependencyContainer) {
      registerValue(c, SENTINEL_TICKER, ticker);
      const registry = resolve(c, PLUGINS);
      for (const definition of (opts.plugins ?? testPlugins)(rec)) {
        registry.add({
          type: definition.type,
          kind: definition.kind,
          definition,
          source: { package: "test", builtin: false, resolvedFrom: "cwd", dir: home },
        });
      }
    },
  };
  const daemon = await startDaemon({
    home,
    env: {},
    // Any free port: the default (18790) may be another test's, or another suite's on the machine.
    flags: { port: 0 },
    clock,
    logger,
    modules: [coreRoutesModule, setup, sentinelsModule],
  });
  const base = `http://127.0.0.1:${daemon.info.port}`;
  const call = async (method: string, path: string, body?: unknown, auth = true) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(auth ? { authorization: `Bearer ${daemon.info.token}` } : {}),
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const engine = resolve(daemon.container, SENTINELS) as SentinelEngine;
  return { daemon, engine, clock, ticker, rec, logs: logger.lines, call, stop: () => daemon.stop() };
}
