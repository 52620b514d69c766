/**
 * Bearer-token authentication of daemon routes (SPEC.md Authentication 2). What each operation
 * requires, whatever the surface, is declared in authorization.ts.
 */
import { timingSafeEqual, createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { RouteAuth } from "../plugin-api/http.js";
import { SvcError } from "../errors.js";

export interface AuthTokens {
  /** `daemon.authToken` or `--auth-token`; survives restarts. */
  stable?: string;
  /** The per-boot token written to runtime.json. */
  boot: string;
}

export function isLoopbackAddress(addr: string): boolean {
  const a = addr.startsWith("::ffff:") ? addr.slice(7) : addr;
  return a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** Constant-time comparison of two secrets of any length. */
export function secretEquals(a: string, b: string): boolean {
  const ha = createHash("sha256").update(a).digest();
  const hb = createHash("sha256").update(b).digest();
  return timingSafeEqual(ha, hb) && a.length === b.length;
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
 * Whether a caller gets SPEC.md's loopback exemption: its socket is on a loopback address and no
 * proxy header says the request came from elsewhere. The one place this is decided.
 */
export function isLoopbackCaller(req: { headers: IncomingHttpHeaders; remoteAddress: string }): boolean {
  return isLoopbackAddress(req.remoteAddress) && PROXY_HEADERS.every((h) => req.headers[h] === undefined);
}

/**
 * Returns the caller's principal, or throws `unauthorized`.
 * A presented token is always checked: a wrong token is refused even where none is needed.
 */
export function authenticate(
  auth: RouteAuth,
  req: { headers: IncomingHttpHeaders; remoteAddress: string },
  tokens: AuthTokens,
): string {
  const presented = bearerOf(req.headers);
  if (presented !== undefined) {
    if (tokens.stable && secretEquals(presented, tokens.stable)) return "token:stable";
    if (secretEquals(presented, tokens.boot)) return "token:boot";
    throw new SvcError("unauthorized", "the bearer token is not valid for this daemon");
  }
  const loopback = isLoopbackCaller(req);
  switch (auth) {
    case "open":
      return loopback ? "loopback" : "anonymous";
    case "loopback-or-token":
      if (loopback) return "loopback";
      if (!tokens.stable) return "anonymous";
      throw new SvcError("unauthorized", "a bearer token is required (daemon.authToken)");
    case "token":
      throw new SvcError(
        "unauthorized",
        "a bearer token is required: the per-boot token from runtime.json (the svc CLI sends it) or daemon.authToken",
      );
  }
}
