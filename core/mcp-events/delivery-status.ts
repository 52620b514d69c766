/**
 * `deliveryStatus` of an `events/subscribe` answer (the sketch's "Webhook Delivery Status"), from
 * the webhook target's projection of the subscription's sentinel (`deliveryStatus: {active,
 * reason?, since?, lastDeliveryAt?, lastError}`, times ISO-8601, `lastError` one of the sketch's
 * categories): the sketch calls `since` `failedSince`. A `lastError` that is not a category (a
 * target that says something else) is left out, so the answer never carries a receiver's words.
 */
import { isCallbackReason, type CallbackReason } from "./rpc-errors.js";

export interface DeliveryStatus {
  active: boolean;
  lastError: CallbackReason | null;
  lastDeliveryAt?: string;
  /** Since when delivery is suspended (`active: false`). */
  failedSince?: string;
  /** svc's reason for a suspension (`consecutive_failures`). */
  reason?: string;
}

/** The answer's `deliveryStatus` from a projected webhook target (active with no error when it says nothing). */
export function deliveryStatusOf(projectedTarget: Record<string, unknown>): DeliveryStatus {
  const raw = projectedTarget.deliveryStatus;
  const s = raw !== null && typeof raw === "object" ? (raw as Record<string, unknown>) : {};
  const active = s.active !== false;
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const lastDeliveryAt = text(s.lastDeliveryAt);
  const since = text(s.since);
  const reason = text(s.reason);
  return {
    active,
    lastError: isCallbackReason(s.lastError) ? s.lastError : null,
    ...(lastDeliveryAt ? { lastDeliveryAt } : {}),
    ...(!active && since ? { failedSince: since } : {}),
    ...(!active && reason ? { reason } : {}),
  };
}
