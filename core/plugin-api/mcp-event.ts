/**
 * The MCP events extension's `EventOccurrence` (design sketch, "EventOccurrence schema"): how a
 * sentinel event is shown to an MCP subscriber, in a poll result or as a webhook delivery body.
 * One shape for both, so a subscriber sees the same bytes whichever mode it uses.
 */
import type { SvcEvent } from "./events.js";

export interface EventOccurrence {
  /** The svc event id (the upstream's stable id where it has one: GitHub's delivery GUID, ...). */
  eventId: string;
  /** The MCP event name subscribed to (e.g. `github.pull_request`). */
  name: string;
  /** ISO-8601 UTC time of the occurrence (the event's own time, normalized; else the time it was shown). */
  timestamp: string;
  /** `{type, subjects, payload}`: the svc event type, its subjects (broadest first) and its data. */
  data: { type: string; subjects: string[]; payload: unknown; truncated?: true };
  /** Position after this event; `null` where there is no replay (webhook deliveries). */
  cursor: string | null;
}

/**
 * The occurrence for `event` under the subscribed `name`. When its JSON would exceed `maxBytes`,
 * `payload` becomes `{summary, subject}` and `data.truncated` is `true` (as the webhook envelope
 * does with `data`).
 */
export function toEventOccurrence(
  name: string,
  event: SvcEvent,
  now: number,
  cursor: string | null,
  maxBytes = 256 * 1024,
): EventOccurrence {
  const base = { eventId: event.id, name, timestamp: isoTime(event.time, now) };
  const full: EventOccurrence = {
    ...base,
    data: { type: event.type, subjects: event.subjects, payload: event.data ?? null },
    cursor,
  };
  const size = Buffer.byteLength(JSON.stringify(full), "utf8");
  if (size <= maxBytes) return full;
  const payload = {
    summary: `payload omitted: the occurrence was ${size} bytes, over the ${maxBytes}-byte limit`,
    subject: event.subjects.at(-1) ?? null,
  };
  return { ...base, data: { type: event.type, subjects: event.subjects, payload, truncated: true }, cursor };
}

/**
 * An ISO-8601 UTC time (`...Z`, what clients validate with `z.iso.datetime()`): the event's own
 * time when it parses, else `now` (a pusher's time may be any string).
 */
function isoTime(time: string | undefined, now: number): string {
  const ms = time === undefined ? NaN : Date.parse(time);
  return new Date(Number.isFinite(ms) ? ms : now).toISOString();
}
