/**
 * The host service "daemonEvents" (DaemonEventSource): plugins hear the daemon's events, read-only.
 * Each listener gets only the types under its prefix, and a copy of each event as `/events` shows
 * it (likely secrets redacted), so it can neither change what `/events` and other listeners see,
 * nor carry further a secret `/events` would hide, nor, by throwing, disturb the emitter.
 */
import type { DaemonEventSource, HeardDaemonEvent } from "../plugin-api/events.js";
import type { Logger } from "../runtime/logger.js";
import type { DaemonEventBus } from "../daemon/event-bus.js";
import { redactLikelySecrets } from "../daemon/mcp/redact.js";

export function daemonEventSource(bus: DaemonEventBus, logger: Logger): DaemonEventSource {
  return {
    subscribe(prefix, listener) {
      if (typeof prefix !== "string")
        throw new TypeError('daemonEvents.subscribe(prefix, listener): prefix must be a string ("" for every event)');
      return bus.subscribe((e) => {
        if (!e.type.startsWith(prefix)) return;
        try {
          listener(copyOf(e));
        } catch (err) {
          logger.warn("a plugin could not take a daemon event", { type: e.type, error: (err as Error).message });
        }
      });
    },
  };
}

function copyOf(e: HeardDaemonEvent): HeardDaemonEvent {
  const data = e.data === undefined ? undefined : redactLikelySecrets(e.data);
  return { seq: e.seq, at: e.at, type: e.type, ...(data === undefined ? {} : { data }) };
}
