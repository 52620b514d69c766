import type { SvcEvent } from "../../core/plugin-api/index.js";
import { SvcError, toEventOccurrence } from "../../core/plugin-api/index.js";
import { LIMITS } from "./limits.js";
import type { StoredWebhookTarget } from "./stored-target.js";

/**
 * The body of a sentinel's deliveries, serialized once: the {@link Envelope} for a plain webhook
 * sentinel, the MCP `EventOccurrence` for an MCP subscription. Either is at most
 * {@link LIMITS.maxBodyBytes} bytes.
 */
export function buildDeliveryBody(
  sentinelId: string,
  target: StoredWebhookTarget | undefined,
  event: SvcEvent,
  now: number,
): Buffer {
  return target?.mcp ? buildOccurrence(target.mcp.eventName, event, now) : buildEnvelope(sentinelId, event, now);
}

/**
 * An MCP subscription's delivery body: `toEventOccurrence(eventName, event, now, null)` (no cursor:
 * webhook deliveries have no replay position). Over {@link LIMITS.maxBodyBytes} bytes its
 * `data.payload` becomes `{summary, subject}` with `data.truncated: true`.
 */
export function buildOccurrence(eventName: string, event: SvcEvent, now: number): Buffer {
  const body = Buffer.from(JSON.stringify(toEventOccurrence(eventName, event, now, null, LIMITS.maxBodyBytes)), "utf8");
  if (body.length > LIMITS.maxBodyBytes) throw tooLarge(event.id, body.length);
  return body;
}

function tooLarge(eventId: string, bytes: number): SvcError {
  return new SvcError(
    "payload_too_large",
    `event ${eventId} cannot be delivered: even without its data the body is ${bytes} bytes, over the ${LIMITS.maxBodyBytes}-byte limit`,
  );
}

/**
 * The delivered event envelope, the body of every delivery POST (fields in this order):
 * - `id`: the stable event id (also the `webhook-id` header; never contains `.`)
 * - `type`: the event type, `<scheme>.<object>.<action>`
 * - `subjects`: the event's subject hierarchy, broadest first
 * - `time`: ISO-8601 time of the occurrence (the time of serialization when the event has none)
 * - `sentinelId`: the sentinel that matched (also the `X-MCP-Subscription-Id` header)
 * - `data`: the event's payload, or `{summary, subject}` when the envelope was too large
 * - `truncated`: `true` only when `data` was replaced
 */
export interface Envelope {
  id: string;
  type: string;
  subjects: string[];
  time: string;
  sentinelId: string;
  data: unknown;
  truncated?: true;
}

/**
 * Serializes the envelope once. Over {@link LIMITS.maxBodyBytes} bytes, `data` becomes
 * `{summary, subject}` and `truncated: true`. The returned bytes are what is persisted, signed and
 * sent on every attempt.
 */
export function buildEnvelope(sentinelId: string, event: SvcEvent, now: number): Buffer {
  const base = {
    id: event.id,
    type: event.type,
    subjects: event.subjects,
    time: event.time ?? new Date(now).toISOString(),
    sentinelId,
  };
  const full = Buffer.from(JSON.stringify({ ...base, data: event.data ?? null } satisfies Envelope), "utf8");
  if (full.length <= LIMITS.maxBodyBytes) return full;
  const data = {
    summary: `data omitted: the envelope was ${full.length} bytes, over the ${LIMITS.maxBodyBytes}-byte delivery limit`,
    subject: event.subjects.at(-1) ?? null,
  };
  const cut = Buffer.from(JSON.stringify({ ...base, data, truncated: true } satisfies Envelope), "utf8");
  if (cut.length > LIMITS.maxBodyBytes) throw tooLarge(event.id, cut.length);
  return cut;
}
