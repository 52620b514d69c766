/**
 * The events extension's services, started on first use (or at daemon start when subscription
 * records exist): the webhook subscriptions (reconciled with their sentinels, then swept), the
 * poll leases, a sweep on a timer (lapsed subscriptions, idle leases), and the end of a
 * subscription whose sentinel someone removed.
 */
import type { DaemonEventBus } from "../daemon/event-bus.js";
import type { Clock, Random } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import type { SentinelService } from "../sentinels/service.js";
import type { EventCatalog } from "./catalog-types.js";
import { MCP_EVENTS_LIMITS as L } from "./limits.js";
import { PollLeases } from "./poll-leases.js";
import { SubscriptionStore } from "./subscription-store.js";
import { WebhookSubscriptions } from "./webhook-subscriptions.js";

export interface McpEventsRuntimeDeps {
  home: string;
  sentinels: SentinelService;
  catalog: () => EventCatalog;
  clock: Clock;
  random: Random;
  logger: Logger;
  events: DaemonEventBus;
  /** The sweep timer's period (default {@link L.sweepEveryMs}; 0: no timer, tests call `sweep`). */
  sweepEveryMs?: number;
}

export interface McpEventsRuntime {
  subscriptions: WebhookSubscriptions;
  polls: PollLeases;
  /** Removes lapsed subscriptions and idle poll leases. */
  sweep(): Promise<{ lapsed: string[]; leasesClosed: number }>;
  /** The daemon begins to stop: waiting polls answer now. */
  drain(): void;
  stop(): Promise<void>;
}

export async function startMcpEventsRuntime(deps: McpEventsRuntimeDeps): Promise<McpEventsRuntime> {
  const logger = deps.logger.child({ area: "mcp-events" });
  const { store, read } = await SubscriptionStore.open(deps.home, logger, deps.clock.now());
  const subscriptions = new WebhookSubscriptions({
    store,
    storeRead: read,
    sentinels: deps.sentinels,
    catalog: deps.catalog,
    clock: deps.clock,
    logger,
  });
  await subscriptions.reconcile();
  const polls = new PollLeases({
    sentinels: deps.sentinels,
    catalog: deps.catalog,
    clock: deps.clock,
    random: deps.random,
  });
  const sweep = async () => ({ lapsed: await subscriptions.sweep(), leasesClosed: polls.sweep() });
  await sweep();
  const stopListening = deps.events.subscribe((e) => {
    if (e.type !== "sentinel:removed") return;
    const sentinelId = (e.data as { sentinelId?: unknown } | undefined)?.sentinelId;
    if (typeof sentinelId !== "string") return;
    subscriptions.sentinelRemoved(sentinelId).catch((err: Error) =>
      logger.error("could not end the subscription of a removed sentinel", {
        sentinel: sentinelId,
        error: err.message,
      }),
    );
  });
  const every = deps.sweepEveryMs ?? L.sweepEveryMs;
  let sweeping: Promise<unknown> = Promise.resolve();
  const timer =
    every > 0
      ? setInterval(
          () =>
            (sweeping = sweep().catch((err: Error) =>
              logger.error("MCP subscription sweep failed", { error: err.message }),
            )),
          every,
        )
      : undefined;
  timer?.unref();
  return {
    subscriptions,
    polls,
    sweep,
    drain: () => polls.drain(),
    async stop() {
      clearInterval(timer);
      stopListening();
      polls.close();
      await sweeping;
    },
  };
}
