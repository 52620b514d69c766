/**
 * Bearer-token authentication of daemon routes (SPEC.md Authentication 2). What each operation
 * requires, whatever the surface, is declared in authorization.ts.
 */
import type { IncomingHttpHeaders } from "node:http";
import type { RouteAuth } from "../plugin-api/http.js";
import { SvcError } from "../errors.js";
import { hasLoopbackHost, isLoopbackAddress } from "./host-names.js";
import { remotePrincipal } from "./principal.js";
import { readRemoteMarker } from "./remote-marker.js";
import { secretEquals } from "./secret-equals.js";

export { secretEquals };

export interface AuthTokens {
  /** `daemon.authToken` or `--auth-token`; survives restarts. */
  stable?: string;
  /** The per-boot token written to runtime.json. */
  boot: string;
  /** The per-boot key by which a request the daemon forwards to itself names its remote caller (remote-marker.ts). */
  forward?: string;
}

export function bearerOf(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

/**
 * Headers by which a proxy says it forwarded someone else's request (RFC 7239 `Forwarded`, the
 * de-facto `X-Forwarded-For` and `X-Real-IP`). Any one of them marks a request as proxied: a
 * proxy on loopback must not lend its own address to a remote caller.
 */
export const PROXY_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"] as const;

/**
 * Whether a caller gets SPEC.md's loopback exemption: its socket is on a loopback address, its
 * `Host` is a loopback name (host-names.ts: a page under any other name that reaches the loopback
 * socket through a wildcard bind is no loopback caller) and no proxy header says the request came
 * from elsewhere. The one place this is decided.
 */
export function isLoopbackCaller(req: { headers: IncomingHttpHeaders; remoteAddress: string }): boolean {
  return (
    isLoopbackAddress(req.remoteAddress) &&
    hasLoopbackHost(req.headers) &&
    PROXY_HEADERS.every((h) => req.headers[h] === undefined)
  );
}

/**
 * Returns the caller's principal (principal.ts names them), or throws `unauthorized`.
 * A presented token is always checked: a wrong token is refused even where none is needed.
 * Without one, a valid dashboard session cookie stands for the token holder (`token:dashboard`),
 * for a loopback caller only: the login is made on this machine, and a request that came through
 * a proxy, the tunnel or a pairing's link is judged by what it carries, never by a cookie.
 * A request through a pairing's link carries the pairing's own authentication (its keys), so it
 * is let in with its scope whether or not `daemon.authToken` is set; a tunnel request or a direct
 * network caller without a token is let in (to read) only while `daemon.authToken` is unset.
 */
export function authenticate(
  auth: RouteAuth,
  req: { headers: IncomingHttpHeaders; remoteAddress: string },
  tokens: AuthTokens,
  /** The principal of the request's dashboard session cookie, when it has a valid one (core/dashboard). */
  cookie?: string,
): string {
  const presented = bearerOf(req.headers);
  if (presented !== undefined) {
    if (tokens.stable && secretEquals(presented, tokens.stable)) return "token:stable";
    if (secretEquals(presented, tokens.boot)) return "token:boot";
    throw new SvcError("unauthorized", "the bearer token is not valid for this daemon");
  }
  const loopback = isLoopbackCaller(req);
  if (cookie !== undefined && loopback) return cookie;
  const remote = loopback ? undefined : readRemoteMarker(req.headers, tokens.forward);
  const beyond = remote ? remotePrincipal(remote) : "anonymous";
  switch (auth) {
    case "open":
      return loopback ? "loopback" : beyond;
    case "loopback-or-token":
      if (loopback) return "loopback";
      if (remote?.kind === "pairing" || !tokens.stable) return beyond;
      throw new SvcError("unauthorized", "a bearer token is required (daemon.authToken)");
    case "token":
      throw new SvcError(
        "unauthorized",
        "a bearer token is required: the per-boot token from runtime.json (the svc CLI sends it) or daemon.authToken",
      );
  }
}
