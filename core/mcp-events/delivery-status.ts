/**
 * `deliveryStatus` of an `events/subscribe` answer (the sketch's "Webhook Delivery Status"), from
 * the webhook target's projection of the subscription's sentinel (`deliveryStatus: {active,
 * reason?, since?, lastDeliveryAt?, lastError?}`). `lastError` is only ever one of the sketch's
 * categories, never the receiver's words.
 */
import type { CallbackReason } from "./rpc-errors.js";

export interface DeliveryStatus {
  active: boolean;
  lastError: CallbackReason | null;
  lastDeliveryAt?: string;
  /** Since when delivery is suspended (`active: false`). */
  failedSince?: string;
  /** svc's reason for a suspension (e.g. the count of consecutive dead deliveries). */
  reason?: string;
}

const CATEGORIES = new Set<string>(["connection_refused", "timeout", "tls_error", "http_4xx", "http_5xx", "challenge_failed"]);

/** svc's delivery error text (or a category already) as a category; null when there is none or it says nothing known. */
export function errorCategory(error: unknown): CallbackReason | null {
  if (typeof error !== "string" || error === "") return null;
  if (CATEGORIES.has(error)) return error as CallbackReason;
  const status = /\bHTTP (\d{3})\b/.exec(error)?.[1];
  if (status) return status.startsWith("5") ? "http_5xx" : "http_4xx";
  if (/^timeout\b/.test(error)) return "timeout";
  if (/^(connect|private_target|redirect|non_https)\b/.test(error)) return "connection_refused";
  return null;
}

const iso = (v: unknown): string | undefined => (typeof v === "number" ? new Date(v).toISOString() : typeof v === "string" ? v : undefined);

/** The answer's `deliveryStatus` from a projected webhook target (active with no error when it says nothing). */
export function deliveryStatusOf(projectedTarget: Record<string, unknown>): DeliveryStatus {
  const raw = projectedTarget.deliveryStatus;
  const s = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const active = s.active !== false;
  const lastDeliveryAt = iso(s.lastDeliveryAt);
  const since = iso(s.since);
  return {
    active,
    lastError: errorCategory(s.lastError),
    ...(lastDeliveryAt ? { lastDeliveryAt } : {}),
    ...(!active && since ? { failedSince: since } : {}),
    ...(!active && typeof s.reason === "string" ? { reason: s.reason } : {}),
  };
}
