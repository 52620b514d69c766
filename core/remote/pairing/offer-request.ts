/**
 * The body of `POST /pairing/offers`, checked field by field: a field that is present but wrong
 * is a 400 naming it, never silently replaced by its default.
 */
import { SvcError } from "../../errors.js";
import type { RemoteScope } from "../../daemon/principal.js";

export const DEFAULT_TTL_MS = 10 * 60_000;
export const MAX_TTL_MS = 24 * 3_600_000;

export interface OfferRequest {
  rendezvous?: string;
  ttlMs: number;
  label?: string;
  /** What the device that accepts may do here; default `read`. */
  scope: RemoteScope;
}

export function parseOfferRequest(body: unknown): OfferRequest {
  if (body !== undefined && body !== null && (typeof body !== "object" || Array.isArray(body)))
    throw new SvcError("invalid_input", "the offer request must be a JSON object");
  const b = (body ?? {}) as { rendezvous?: unknown; ttlMs?: unknown; label?: unknown; scope?: unknown };
  if (
    b.rendezvous !== undefined &&
    (typeof b.rendezvous !== "string" || !/^wss?:\/\/[^\s/?#]+\S*$/.test(b.rendezvous))
  ) {
    throw new SvcError(
      "invalid_input",
      `rendezvous must be a ws:// or wss:// URL (got ${JSON.stringify(b.rendezvous)})`,
    );
  }
  if (
    b.ttlMs !== undefined &&
    (typeof b.ttlMs !== "number" || !Number.isSafeInteger(b.ttlMs) || b.ttlMs < 1000 || b.ttlMs > MAX_TTL_MS)
  ) {
    throw new SvcError(
      "invalid_input",
      `ttlMs must be a whole number of milliseconds from 1000 (1 s) to ${MAX_TTL_MS} (24 h) (got ${JSON.stringify(b.ttlMs)})`,
    );
  }
  if (b.label !== undefined && (typeof b.label !== "string" || b.label.length > 80))
    throw new SvcError("invalid_input", "label must be a string of at most 80 characters");
  if (b.scope !== undefined && b.scope !== "read" && b.scope !== "operate")
    throw new SvcError("invalid_input", `scope must be "read" or "operate" (got ${JSON.stringify(b.scope)})`);
  return {
    scope: (b.scope as RemoteScope | undefined) ?? "read",
    ...(b.rendezvous !== undefined ? { rendezvous: b.rendezvous as string } : {}),
    ttlMs: (b.ttlMs as number | undefined) ?? DEFAULT_TTL_MS,
    ...(b.label !== undefined ? { label: b.label as string } : {}),
  };
}
