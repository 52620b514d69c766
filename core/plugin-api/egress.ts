/**
 * The host's outbound HTTPS client behind the SSRF gate, offered to plugins as the host service
 * `"egress"` (`ctx.service("egress")`). Every request is https only, every resolved address is
 * validated against the IANA special-purpose registries (minus `webhooks.allowSubnets`), the
 * connection goes to a validated address only, redirects are never followed and bodies are
 * clamped to 256 KiB. The host owns its lifecycle: plugins never close it.
 */

/** The request and read-response body limit of the egress: 256 KiB. */
export const EGRESS_MAX_BODY_BYTES = 262_144;

/** Why the gate refused or a request failed (the thrown SvcError's `code`). */
/** `tls_untrusted`: the receiver's certificate was not accepted (untrusted chain, expired, or not for this host). */
export type EgressFailure = "non_https" | "private_target" | "redirect" | "timeout" | "connect" | "tls_untrusted";

export interface EgressResponse {
  status: number;
  headers: Record<string, string>;
  /** Clamped to 256 KiB; the rest is discarded. */
  body: Buffer;
  /** True when the response body was longer than the clamp. */
  truncated: boolean;
}

export interface Egress {
  /**
   * POST through the gate. Resolves with any HTTP status (3xx returned as is, never followed);
   * throws SvcError with code = an {@link EgressFailure} (message names the host only, never the
   * full URL, a body or a secret), or `payload_too_large` for a request body over 256 KiB.
   */
  post(
    url: string,
    init: { headers: Record<string, string>; body: Buffer | string; timeoutMs: number },
  ): Promise<EgressResponse>;
  close(): Promise<void>;
}
