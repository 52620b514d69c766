/**
 * Browser-facing guards: CORS for `daemon.allowedOrigins` only, refusal of cross-origin
 * state-changing requests from any other Origin, and a Host check against DNS rebinding.
 */
import type { IncomingHttpHeaders } from "node:http";
import { SvcError } from "../errors.js";
import { isLoopbackAddress } from "./auth.js";

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
  return policy.allowedOrigins.some((a) => a === "*" ? false : normalizeOrigin(a) === o);
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]", "::1"]);

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
  if (LOOPBACK_HOSTS.has(name) || /^127\.\d+\.\d+\.\d+$/.test(name)) return;
  if (!isLoopbackBind(bind)) return;
  throw new SvcError("forbidden", `Host "${name}" is not this daemon; requests must address it by a loopback name`);
}

/** Throws `forbidden` for a cross-origin browser request to a state-changing route. */
export function checkOrigin(method: string, headers: IncomingHttpHeaders, policy: OriginPolicy): void {
  const origin = headers.origin;
  if (origin === undefined || SAFE_METHODS.has(method)) return;
  if (isAllowedOrigin(origin, policy)) return;
  throw new SvcError("forbidden", `Origin ${normalizeOrigin(origin)} is not in daemon.allowedOrigins`);
}

/** CORS response headers: only for allowed origins. */
export function corsHeaders(headers: IncomingHttpHeaders, policy: OriginPolicy, preflight: boolean): Record<string, string> {
  const origin = headers.origin;
  if (!origin || !isAllowedOrigin(origin, policy)) return {};
  const out: Record<string, string> = {
    "access-control-allow-origin": origin,
    vary: "Origin",
    "access-control-expose-headers": "mcp-session-id, last-event-id",
  };
  if (preflight) {
    out["access-control-allow-methods"] = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
    out["access-control-allow-headers"] =
      (headers["access-control-request-headers"] as string | undefined) ?? "authorization, content-type";
    out["access-control-max-age"] = "600";
  }
  return out;
}
