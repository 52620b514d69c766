import { SvcError, hostOf } from "../../core/plugin-api/index.js";
import type { Egress } from "../../core/plugin-api/index.js";
import { categoryOfError, categoryOfStatus, type DeliveryFailure } from "./failure-category.js";
import { signatureHeader } from "./signer.js";

/**
 * `error` is the row's `lastError` (names the host only); `category` what endpoint health records.
 * `rejected`: the receiver refused this delivery (terminal).
 */
export type AttemptOutcome =
  | { kind: "delivered"; status: number }
  | { kind: "rejected"; error: string; category: DeliveryFailure }
  | { kind: "retry"; error: string; category: DeliveryFailure };

export interface AttemptInput {
  url: string;
  /** The `X-MCP-Subscription-Id`: the sentinel id, or its MCP subscription's id. */
  subscriptionId: string;
  eventId: string;
  body: Buffer;
  keys: Buffer[];
  /** Unix seconds of this attempt (fresh each time). */
  timestamp: number;
  timeoutMs: number;
}

/**
 * One delivery POST and its classification (SPEC.md "Delivery rules"): 2xx acks; 410 and 413
 * are terminal; 3xx, other 4xx, 5xx and network errors (an untrusted certificate among them,
 * `tls_untrusted`) retry. Errors name the host only.
 */
export async function attemptDelivery(egress: Pick<Egress, "post">, input: AttemptInput): Promise<AttemptOutcome> {
  const host = hostOf(input.url);
  const headers = {
    "webhook-id": input.eventId,
    "webhook-timestamp": String(input.timestamp),
    "webhook-signature": signatureHeader(input.keys, input.eventId, input.timestamp, input.body),
    "content-type": "application/json",
    "x-mcp-subscription-id": input.subscriptionId,
  };
  let status: number;
  try {
    status = (await egress.post(input.url, { headers, body: input.body, timeoutMs: input.timeoutMs })).status;
  } catch (err) {
    const code = SvcError.is(err) ? err.code : "connect";
    // An untrusted certificate is a network error: retried as SPEC.md's delivery rules say, its
    // own message (which says which and the fix) kept in lastError.
    if (code === "tls_untrusted")
      return { kind: "retry", error: `tls_untrusted: ${(err as Error).message}`, category: categoryOfError(err) };
    return {
      kind: "retry",
      error: `${code}: the request to ${host} failed` + describe(code, input.timeoutMs) + fixOf(err),
      category: categoryOfError(err),
    };
  }
  if (status >= 200 && status < 300) return { kind: "delivered", status };
  if (status === 410 || status === 413)
    return {
      kind: "rejected",
      error: `${host} answered HTTP ${status} (terminal, not retried)`,
      category: categoryOfStatus(status),
    };
  return { kind: "retry", error: `${host} answered HTTP ${status}`, category: categoryOfStatus(status) };
}

/** The fix the SSRF gate named for a blocked address (`webhooks.allowSubnets`), when it named one. */
function fixOf(err: unknown): string {
  const details = SvcError.is(err) ? err.details : undefined;
  const fix = details && !Array.isArray(details) ? details.fix : undefined;
  return typeof fix === "string" ? `. ${fix}` : "";
}

function describe(code: string, timeoutMs: number): string {
  switch (code) {
    case "timeout":
      return ` (no answer within ${timeoutMs} ms)`;
    case "redirect":
      return " (a redirect to a non-https location; redirects are never followed)";
    case "private_target":
      return " (the SSRF gate blocked a non-public address)";
    case "non_https":
      return " (not https)";
    default:
      return "";
  }
}
