/**
 * `GET /events`: the daemon's events (DAEMON_EVENTS) as a server-sent events stream.
 *
 * Each event is `id: <seq>`, `event: <type>`, `data: {"seq","at","type","data"}`. A client that
 * reconnects with `Last-Event-ID` (or `?lastEventId=`) first gets the events it missed that are
 * still in the backlog, then the live ones; when some were lost (backlog overflow, or the id comes
 * from an earlier daemon life, whose seq numbers restart at 1) an `events:gap` event says so
 * before the replay. A `: keep-alive` comment every 15 s keeps proxies from closing the stream.
 * Values under secret-looking keys are redacted before anything is written.
 */
import type { ServerResponse } from "node:http";
import type { DependencyContainer } from "tsyringe";
import { SvcError } from "../errors.js";
import type { RouteDef, RouteRequest } from "../plugin-api/http.js";
import { DAEMON_EVENTS, ROUTES, resolve } from "../tokens.js";
import type { DaemonEventBus, StampedEvent } from "./event-bus.js";
import type { DaemonModule } from "./module.js";
import { redactLikelySecrets } from "./mcp/redact.js";

export interface EventsRouteOptions {
  /** Interval of the keep-alive comment; default 15 s. */
  keepAliveMs?: number;
  /** The reconnection delay suggested to clients (`retry:`); default 2 s. */
  retryMs?: number;
  /** A client whose unsent output exceeds this many bytes is disconnected; default 4 MiB. */
  maxBufferedBytes?: number;
}

export function formatSseEvent(e: StampedEvent): string {
  const type = e.type.replace(/[\r\n]/g, " ");
  const data = JSON.stringify(
    redactLikelySecrets({ seq: e.seq, at: e.at, type: e.type, ...(e.data === undefined ? {} : { data: e.data }) }),
  );
  return `id: ${e.seq}\nevent: ${type}\ndata: ${data}\n\n`;
}

/**
 * The text of the event being fanned out, formatted once for all subscribers: the bus calls every
 * listener with the same event object in turn, so one remembered pair is enough. (It stays a
 * string: one shared Buffer per event measured no better after a burst, and a string queued for a
 * slow subscriber lives in V8's heap, which the idle collector compacts, not in the C heap.)
 */
let formatted: { event: StampedEvent; text: string } | undefined;

function sseTextOf(e: StampedEvent): string {
  if (formatted?.event !== e) formatted = { event: e, text: formatSseEvent(e) };
  return formatted.text;
}

function lastEventIdOf(req: RouteRequest): number | undefined {
  const header = req.headers["last-event-id"];
  const raw = (Array.isArray(header) ? header[0] : header) ?? req.query.get("lastEventId") ?? undefined;
  if (raw === undefined || raw.trim() === "") return undefined;
  if (!/^\d{1,15}$/.test(raw.trim())) {
    throw new SvcError(
      "invalid_input",
      `Last-Event-ID must be a non-negative integer (an event's seq), got ${JSON.stringify(raw.slice(0, 40))}`,
    );
  }
  return Number(raw.trim());
}

/** The `/events` route over `bus`; `streams` collects the open responses (ended at daemon stop). */
export function eventsRoute(
  bus: DaemonEventBus,
  streams: Set<ServerResponse>,
  options: EventsRouteOptions = {},
): RouteDef {
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const maxBuffered = options.maxBufferedBytes ?? 4 * 1024 * 1024;
  return {
    method: "GET",
    path: "/events",
    auth: "loopback-or-token",
    handler(req) {
      const last = lastEventIdOf(req);
      const res = req.res;
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache, no-transform",
        connection: "keep-alive",
        "x-accel-buffering": "no",
      });
      res.write(`retry: ${options.retryMs ?? 2000}\n: connected\n\n`);
      let sent = last ?? Number.POSITIVE_INFINITY;
      if (last !== undefined) {
        const all = bus.since(0);
        const newest = all.at(-1)?.seq ?? 0;
        const restarted = last > newest;
        if (restarted) sent = 0;
        const missed = restarted ? all : bus.since(last);
        if (restarted || (missed[0] && missed[0].seq > last + 1)) {
          const reason = restarted ? "daemon_restarted" : "backlog_overflow";
          res.write(
            `event: events:gap\ndata: ${JSON.stringify({ after: last, reason, resumedFrom: missed[0]?.seq ?? null })}\n\n`,
          );
        }
        for (const e of missed) write(e);
      }
      function write(e: StampedEvent): void {
        if (Number.isFinite(sent) && e.seq <= sent) return;
        sent = e.seq;
        res.write(sseTextOf(e));
        if (res.writableLength > maxBuffered) res.destroy();
      }
      const unsubscribe = bus.subscribe(write);
      const timer = setInterval(() => res.write(": keep-alive\n\n"), keepAliveMs);
      timer.unref?.();
      streams.add(res);
      const cleanup = () => {
        clearInterval(timer);
        unsubscribe();
        streams.delete(res);
      };
      res.once("close", cleanup);
      return undefined;
    },
  };
}

const openStreams = new WeakMap<DependencyContainer, Set<ServerResponse>>();

export const eventsModule: DaemonModule = {
  name: "events",
  async start(c) {
    const streams = new Set<ServerResponse>();
    openStreams.set(c, streams);
    resolve(c, ROUTES).add(eventsRoute(resolve(c, DAEMON_EVENTS), streams));
  },
  async drain(c) {
    for (const res of openStreams.get(c) ?? []) res.end();
  },
};
