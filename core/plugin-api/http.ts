import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";

/**
 * How a daemon route is guarded.
 * - `token`: a bearer token is always required (the per-boot token from runtime.json or
 *   `daemon.authToken`), even from loopback.
 * - `loopback-or-token`: SPEC.md Authentication 2: loopback callers without a proxy header
 *   (`Forwarded`, `X-Forwarded-For`, `X-Real-IP`) are exempt; others need a token when `daemon.authToken` is set; open when it is not.
 * - `open`: no bearer check (the route authenticates requests itself, e.g. by an HMAC signature).
 * Every route also passes the Host and Origin checks of the daemon.
 */
export type RouteAuth = "token" | "loopback-or-token" | "open";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface RouteRequest {
  method: HttpMethod;
  /** The path without the query string. */
  path: string;
  params: Record<string, string>;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The raw body (already read, capped by the route's `maxBodyBytes`). Empty for GET. */
  body: Buffer;
  /** The body parsed as JSON; throws an `invalid_input` SvcError when it is not JSON. */
  json<T = unknown>(): T;
  /**
   * Who is calling: `token:stable`, `token:boot`, `loopback`, `anonymous` (beyond loopback, no
   * token), `remote:tunnel`, `remote:sealed` or `remote:pairing:<id>:<read|operate>`.
   */
  principal: string;
  remoteAddress: string;
  /** For streaming routes (SSE, MCP): the raw request and response. */
  raw: IncomingMessage;
  res: ServerResponse;
}

export interface RouteResponse {
  status: number;
  headers?: Record<string, string>;
  /** A JSON value (serialized), a string or a Buffer (sent as is). */
  body?: unknown;
}

export interface RouteDef {
  method: HttpMethod;
  /** `/sentinels/:id`; a trailing `/*` matches any rest (exposed as `params["*"]`). */
  path: string;
  auth: RouteAuth;
  /**
   * What a caller beyond loopback without a token (a paired device, a tunnel request, a network
   * caller while `daemon.authToken` is unset) needs: `read`, or `operate` (only a pairing given
   * that scope). Default: the route's operation in docs/authorization.md, else `read` for GET and
   * `operate` for the other methods.
   */
  remote?: "read" | "operate";
  /** Default 1 MiB. */
  maxBodyBytes?: number;
  /**
   * Returns the response, or `undefined` when the handler wrote `req.res` itself (streaming).
   * Throw an SvcError for errors: the daemon maps its code to the HTTP status.
   */
  handler(req: RouteRequest): Promise<RouteResponse | undefined> | RouteResponse | undefined;
}

export interface RouteRegistry {
  add(route: RouteDef): void;
}
