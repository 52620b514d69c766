/**
 * The daemon's own origin as a request names it: `http://` and the request's `Host`. It is what a
 * page served by the daemon itself would send as `Origin`, and the base of the absolute URLs the
 * daemon hands out (the protected-resource metadata, RFC 9728).
 */
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";

/** A `Host` value that is an authority and nothing else: a name or an address, and a port. */
const AUTHORITY = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(:\d{1,5})?$/i;

/** The request's `Host`, lower-cased, when it is a plain authority (`name[:port]`), else undefined. */
export function hostAuthority(host: string | undefined): string | undefined {
  return host !== undefined && AUTHORITY.test(host) ? host.toLowerCase() : undefined;
}

/** The hostname of an authority, without port or IPv6 brackets. */
export function hostnameOf(authority: string): string {
  return authority.replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
}

/** True when the hostname is an IP literal: naming it involves no DNS, so it cannot be rebound. */
export function isIpLiteral(hostname: string): boolean {
  return isIP(hostname) !== 0;
}

/**
 * `http://<Host>`; without a usable Host (HTTP/1.0, or a value that is not an authority) the
 * address and port the request arrived on.
 */
export function ownOrigin(req: IncomingMessage): string {
  const host = hostAuthority(req.headers.host);
  if (host) return `http://${host}`;
  const addr = (req.socket.localAddress ?? "127.0.0.1").replace(/^::ffff:/, "");
  return `http://${addr.includes(":") ? `[${addr}]` : addr}:${req.socket.localPort ?? 0}`;
}
