/**
 * Browser-facing guards: CORS for `daemon.allowedOrigins` only, refusal of cross-origin
 * state-changing requests from any other Origin (the daemon's own origin is not cross-origin),
 * and a Host check against DNS rebinding (host-names.ts says which Host names the daemon).
 */
import type { IncomingHttpHeaders } from "node:http";
import { SvcError } from "../errors.js";
import { type HostPolicy, isLoopbackName, namesThisDaemon } from "./host-names.js";
import { hostAuthority, hostnameOf, isIpLiteral } from "./own-origin.js";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export interface OriginPolicy {
  allowedOrigins: readonly string[];
}

export function normalizeOrigin(origin: string): string {
  try {
    const u = new URL(origin);
    return `${u.protocol}//${u.host}`.toLowerCase();
  } catch {
    return origin.toLowerCase();
  }
}

export function isAllowedOrigin(origin: string, policy: OriginPolicy): boolean {
  const o = normalizeOrigin(origin);
  return policy.allowedOrigins.some((a) => (a === "*" ? false : normalizeOrigin(a) === o));
}

/**
 * Refuses, before any route, a request whose Host does not name this daemon (DNS rebinding:
 * host-names.ts), whatever the bind. A request without Host (HTTP/1.0, never a browser) passes.
 */
export function checkHost(headers: IncomingHttpHeaders, policy: HostPolicy): void {
  const host = headers.host;
  if (host === undefined) return;
  const authority = hostAuthority(host);
  if (authority !== undefined && namesThisDaemon(hostnameOf(authority), policy)) return;
  const shown = JSON.stringify(authority === undefined ? host.slice(0, 100) : hostnameOf(authority));
  throw new SvcError(
    "forbidden",
    `Host ${shown} does not name this daemon (a page under a foreign name may be DNS rebinding): address it as localhost, ` +
      `127.0.0.1, [::1] or an address of this machine, or add the name to daemon.allowedHosts ` +
      `(svc config set daemon.allowedHosts '["<name>"]')`,
  );
}

/**
 * True when `origin` is the daemon's own origin: `http://` and the request's Host, where that Host
 * names the daemon without DNS (a loopback name or an IP literal).
 *
 * Why this is safe. A browser sets `Origin` itself (a page cannot forge it) to the origin of the
 * page that sends the request, and `Host` to the authority of the URL it sends it to; the two are
 * equal only when a page sends to its own origin. Such a page came from the daemon, unless a name
 * in its origin was rebound (DNS rebinding: evil.example first resolves to the attacker's server,
 * whose page then sends to evil.example once it resolves to the daemon; that request is
 * "same-origin" to the browser). So the Host must name the daemon without DNS:
 * - the daemon has already refused (checkHost) every Host that is not a loopback name (`localhost`,
 *   which browsers resolve to loopback without DNS, `127.x.x.x`, `[::1]`), an address of this
 *   machine, the bind address or a name in `daemon.allowedHosts`;
 * - of those, a DNS name is never taken as its own origin here (a name in `daemon.allowedHosts`
 *   passes the Host check, but a page under it is let in by listing its origin in
 *   `daemon.allowedOrigins`); an IP literal is (nothing resolves it, so the page and the request
 *   both reached whatever listens on that address and port: the daemon).
 */
export function isSameOrigin(origin: string, headers: IncomingHttpHeaders): boolean {
  const host = hostAuthority(headers.host);
  if (!host) return false;
  const name = hostnameOf(host);
  if (!isLoopbackName(name) && !isIpLiteral(name)) return false;
  return normalizeOrigin(origin) === normalizeOrigin(`http://${host}`);
}

/**
 * Throws `forbidden` for a cross-origin browser request to a state-changing route: one whose
 * Origin is neither the daemon's own ({@link isSameOrigin}) nor in `daemon.allowedOrigins`.
 */
export function checkOrigin(method: string, headers: IncomingHttpHeaders, policy: OriginPolicy): void {
  const origin = headers.origin;
  if (origin === undefined || SAFE_METHODS.has(method)) return;
  if (isSameOrigin(origin, headers) || isAllowedOrigin(origin, policy)) return;
  throw new SvcError(
    "forbidden",
    `Origin ${normalizeOrigin(origin)} is not this daemon's own origin and not in daemon.allowedOrigins`,
  );
}

/** CORS response headers: only for allowed origins. */
export function corsHeaders(
  headers: IncomingHttpHeaders,
  policy: OriginPolicy,
  preflight: boolean,
): Record<string, string> {
  const origin = headers.origin;
  if (!origin || !isAllowedOrigin(origin, policy)) return {};
  const out: Record<string, string> = {
    "access-control-allow-origin": origin,
    vary: "Origin",
    "access-control-expose-headers": "mcp-session-id, last-event-id, www-authenticate",
  };
  if (preflight) {
    out["access-control-allow-methods"] = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
    out["access-control-allow-headers"] =
      (headers["access-control-request-headers"] as string | undefined) ?? "authorization, content-type";
    out["access-control-max-age"] = "600";
  }
  return out;
}
