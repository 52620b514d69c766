export const DELIVERY_FAILURES = [
  "connection_refused",
  "timeout",
  "tls_error",
  "http_4xx",
  "http_5xx",
  "challenge_failed",
] as const;
export type DeliveryFailure = (typeof DELIVERY_FAILURES)[number];

/**
 * An HTTP answer that is not a success: 5xx is `http_5xx`; 4xx and 3xx (svc never follows a
 * redirect, so the endpoint did not take the delivery as sent) are `http_4xx`.
 */
export function categoryOfStatus(status: number): DeliveryFailure {
  return status >= 500 ? "http_5xx" : "http_4xx";
}

/**
 * A request that got no usable answer: `tls_error` when the TLS handshake failed (an untrusted or
 * mismatched certificate, a protocol error), `timeout` when no answer came in time,
 * `connection_refused` otherwise (refused, reset, no such host, or the SSRF gate refusing the
 * address). A redirect to a non-https location counts as `http_4xx`, like any other 3xx.
 */
export function categoryOfError(err: unknown): DeliveryFailure {
  const codes = codesOf(err);
  if (codes.some(isTlsCode)) return "tls_error";
  // The innermost code is the cause (a challenge's `timeout` may wrap the gate's `connect`, which wraps ECONNREFUSED).
  const cause = codes.at(-1);
  if (cause === "redirect") return "http_4xx";
  if (cause === "timeout" || (cause !== undefined && TIMEOUT_CODES.has(cause))) return "timeout";
  return "connection_refused";
}

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
  "ABORT_ERR",
]);

function isTlsCode(code: string): boolean {
  return (
    code.startsWith("ERR_TLS_") ||
    code.startsWith("ERR_SSL_") ||
    code.startsWith("UNABLE_TO_") ||
    code.includes("CERT") ||
    code === "tls_untrusted" ||
    code === "EPROTO"
  );
}

/** The `code`s along the error's cause chain, outermost first (SvcError codes included). */
function codesOf(err: unknown): string[] {
  const codes: string[] = [];
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e !== null && typeof e === "object"; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && code !== "") codes.push(code);
    e = (e as { cause?: unknown }).cause;
  }
  return codes;
}
