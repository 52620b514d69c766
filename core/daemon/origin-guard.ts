/**
 * Browser-facing guards: CORS for `daemon.allowedOrigins` only, refusal of cross-origin
 * state-changing requests from any other Origin (the daemon's own origin is not cross-origin),
 * and a Host check against DNS rebinding.
 */
import type { IncomingHttpHeaders } from "node:http";
import { SvcError } from "../errors.js";
import { isLoopbackAddress } from "./auth.js";
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

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

/** A loopback name as a Host gives it: `localhost`, `127.x.x.x`, `::1` (bracketed or not). */
function isLoopbackName(name: string): boolean {
  return LOOPBACK_HOSTS.has(name) || /^127\.\d+\.\d+\.\d+$/.test(name);
}

/** True when `bind` is a loopback address or name (any of 127.0.0.0/8, ::1, localhost). */
export function isLoopbackBind(bind: string): boolean {
  const b = bind.toLowerCase();
  return b === "localhost" || isLoopbackAddress(b.replace(/^\[(.*)\]$/, "$1"));
}

/**
 * Refuses requests whose Host names something other than this daemon (DNS rebinding). Only a
 * daemon bound to loopback checks: one bound to a routable address answers to its names on purpose.
 */
export function checkHost(headers: IncomingHttpHeaders, bind: string): void {
  const host = headers.host;
  if (!host) return; // HTTP/1.0 clients; nothing to rebind
  const name = host.replace(/:\d+$/, "").toLowerCase();
  if (isLoopbackName(name)) return;
  if (!isLoopbackBind(bind)) return;
  throw new SvcError("forbidden", `Host "${name}" is not this daemon; requests must address it by a loopback name`);
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
 * - a daemon bound to loopback has already refused (checkHost) every Host that is not a loopback
 *   name (`localhost`, which browsers resolve to loopback without DNS, `127.x.x.x`, `[::1]`);
 * - a daemon bound beyond loopback answers to any Host, so here a DNS name is never taken as its
 *   own origin (it may be rebound); an IP literal is (nothing resolves it, so the page and the
 *   request both reached whatever listens on that address and port: the daemon). A page served
 *   under a DNS name the owner trusts is let in by listing its origin in `daemon.allowedOrigins`.
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
