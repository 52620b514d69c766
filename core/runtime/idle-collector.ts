/**
 * Gives memory back when the daemon goes quiet after a burst. V8 collects only when JavaScript
 * allocates, so a process that stops working keeps whatever its heap grew to: after a burst of
 * deliveries the young generation stays at its 32 MiB peak and emptied old-space pages stay
 * committed, for as long as the daemon is idle (issue 29: 166-188 MiB still a minute after an
 * audit load, from 106 MiB idle). The collector checks every few seconds, off the hot path (an unref'd timer, two cheap
 * reads); when the event loop was nearly idle for the whole interval and V8 holds well more memory
 * than its objects use, it runs a full, compacting collection, which shrinks the young generation
 * and releases the old generation's emptied pages. Once the heap is back near its data it does
 * nothing until the next burst.
 */
import { getHeapStatistics, setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { performance, type EventLoopUtilization } from "node:perf_hooks";
import type { Logger } from "./logger.js";

export interface IdleCollectorOptions {
  /** Interval of the check; default 5 s. */
  intervalMs?: number;
  /** Event loop utilization (0..1) over a whole interval at or under which the daemon is idle; default 0.02. */
  idleUtilization?: number;
  /**
   * Committed heap beyond the live data (bytes) worth a collection, and growth of the committed heap
   * since the last collection that counts as a new burst; default 8 MiB.
   */
  slackBytes?: number;
  /** Collections at most after each burst; default 3 (the first one may not shrink the young generation). */
  maxCollections?: number;
}

/** What the collector reads and does, injectable so its decisions can be tested without timers. */
export interface IdleCollectorProbe {
  /** V8's heap: bytes committed, and bytes in use by objects (live or not yet collected). */
  heap(): { committed: number; used: number };
  /** Event loop utilization since the previous call (0..1). */
  utilization(): number;
  /** One full collection. */
  collect(): void;
}

/**
 * The decision, apart from the timer: call {@link check} once per interval. It collects when the
 * interval was idle and the heap holds at least the slack beyond its data, at most
 * `maxCollections` times until the heap grows by the slack again: V8 shrinks its young generation
 * only once its allocation rate over the last seconds is low, which a first collection right after a
 * burst may not see yet.
 */
export class IdleCollector {
  /** The committed heap the last collection left. */
  private floor: number | undefined;
  /** Collections since the heap last grew past floor + slack. */
  private sinceGrowth = 0;
  collections = 0;

  constructor(
    private readonly probe: IdleCollectorProbe,
    private readonly options: Required<Omit<IdleCollectorOptions, "intervalMs">>,
  ) {}

  /** Collects when idle with memory to give back; returns the committed heap's bytes before and after, or undefined. */
  check(): { before: number; after: number } | undefined {
    const busy = this.probe.utilization() > this.options.idleUtilization;
    if (busy) return undefined;
    const { committed, used } = this.probe.heap();
    if (this.floor === undefined || committed >= this.floor + this.options.slackBytes) this.sinceGrowth = 0;
    if (this.sinceGrowth >= this.options.maxCollections) return undefined;
    if (committed - used < this.options.slackBytes) return undefined;
    this.probe.collect();
    this.probe.utilization(); // the collection's own time is not activity of the daemon's
    this.collections++;
    this.sinceGrowth++;
    this.floor = this.probe.heap().committed;
    return { before: committed, after: this.floor };
  }
}

let exposedGc: (() => void) | undefined;

/**
 * V8's full collection as a function, without `--expose-gc` on the command line: the flag is set for
 * as long as one small context is created (its global `gc` is the collector) and then cleared, so no
 * later context gets a `gc` global.
 */
export function fullCollection(): () => void {
  if (exposedGc) return exposedGc;
  const own = (globalThis as { gc?: () => void }).gc;
  if (typeof own === "function") return (exposedGc = own);
  setFlagsFromString("--expose-gc");
  try {
    exposedGc = runInNewContext("gc") as () => void;
  } finally {
    setFlagsFromString("--no-expose-gc");
  }
  return exposedGc;
}

/**
 * One full collection that also compacts every old-space page: a plain one leaves the pages a burst
 * fragmented committed (about a fifth more than the live data); moving the survivors together lets
 * V8 release them. It costs tens of milliseconds on a heap of tens of MiB, which is why it runs only idle.
 */
export function compactingCollection(): void {
  const collect = fullCollection();
  setFlagsFromString("--compact-on-every-full-gc");
  try {
    collect();
  } finally {
    setFlagsFromString("--no-compact-on-every-full-gc");
  }
}

/** The probe of this process: V8's heap, the event loop's utilization and a full collection. */
export function processProbe(): IdleCollectorProbe {
  let last: EventLoopUtilization = performance.eventLoopUtilization();
  return {
    heap() {
      const heap = getHeapStatistics();
      return { committed: heap.total_heap_size, used: heap.used_heap_size };
    },
    utilization() {
      const now = performance.eventLoopUtilization();
      const delta = performance.eventLoopUtilization(now, last);
      last = now;
      return delta.utilization;
    },
    collect: compactingCollection,
  };
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

/** Starts the collector on this process (each collection logged at debug); the returned function stops it. */
export function startIdleCollector(
  logger: Logger,
  options: IdleCollectorOptions = {},
  probe: IdleCollectorProbe = processProbe(),
): () => void {
  const collector = new IdleCollector(probe, {
    idleUtilization: options.idleUtilization ?? 0.02,
    slackBytes: options.slackBytes ?? 8 * 1024 * 1024,
    maxCollections: options.maxCollections ?? 3,
  });
  const timer = setInterval(() => {
    const done = collector.check();
    if (done) logger.debug("idle collection", { heapMiBBefore: mib(done.before), heapMiBAfter: mib(done.after) });
  }, options.intervalMs ?? 5_000);
  timer.unref();
  return () => clearInterval(timer);
}
