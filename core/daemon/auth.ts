/**
 * Bearer-token authentication of daemon routes (SPEC.md Authentication 2, and the `/sentinels`
 * rule documented in the README: routes that change sentinels or push events always need a token).
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
  const loopback = isLoopbackAddress(req.remoteAddress) && req.headers["x-forwarded-for"] === undefined;
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
