/**
 * The daemon's HTTP server: Host and Origin guards (the Host one first, before any route, on every
 * bind), CORS, bearer auth per route, body caps,
 * JSON responses and the one error body shape `{error: {code, message, details}}`. A 401 carries
 * the bearer challenge (`WWW-Authenticate`, RFC 6750 and RFC 9728), a 405 the path's `Allow`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpMethod, RouteRequest, RouteResponse } from "../plugin-api/http.js";
import { SvcError, httpStatusFor, toPublicError, toSvcError } from "../errors.js";
import type { Logger } from "../runtime/logger.js";
import { authenticate, bearerOf, type AuthTokens } from "./auth.js";
import { requireReach, requireToken, routeNeed } from "./authorization.js";
import { parseJsonBody } from "./json-body.js";
import type { HostPolicy } from "./host-names.js";
import { checkHost, checkOrigin, corsHeaders, type OriginPolicy } from "./origin-guard.js";
import { bearerChallenge } from "./resource-metadata.js";
import type { RouteTable } from "./route-table.js";

export interface HttpServerOptions {
  routes: RouteTable;
  logger: Logger;
  tokens: () => AuthTokens;
  policy: () => OriginPolicy;
  /** The names the daemon answers to (`daemon.bind`, `daemon.allowedHosts`): any other Host is refused 403. */
  hosts: () => HostPolicy;
  /** The principal of a request's dashboard session cookie, when it carries a valid one. */
  cookiePrincipal?: (method: string, headers: IncomingMessage["headers"]) => string | undefined;
  /** Why no route serves a request, when something more useful than "no route" is known. */
  explainMissing?: (method: string, path: string) => SvcError | undefined;
}

const DEFAULT_MAX_BODY = 1024 * 1024;

export class DaemonHttpServer {
  private server?: Server;
  private started = false;

  /** The modules are up: serve routes (before this, every request is answered 503). */
  ready(): void {
    this.started = true;
  }

  constructor(private readonly opts: HttpServerOptions) {}

  async listen(port: number, host: string): Promise<number> {
    const server = createServer((req, res) => void this.handle(req, res));
    server.keepAliveTimeout = 5_000;
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, host, () => {
        server.off("error", reject);
        resolve();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections?.();
      setTimeout(() => server.closeAllConnections?.(), 2_000).unref();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? "GET").toUpperCase();
    const url = new URL(req.url ?? "/", "http://daemon.invalid");
    const remoteAddress = req.socket.remoteAddress ?? "";
    const policy = this.opts.policy();
    let cors: Record<string, string> = {};
    /** Headers an error answer needs besides CORS (`Allow` on a 405). */
    let errorHeaders: Record<string, string> = {};
    let principal: string | undefined;
    const starting = !this.started;
    try {
      if (starting) throw new SvcError("unavailable", "the daemon is starting; try again in a moment");
      checkHost(req.headers, this.opts.hosts());
      if (method === "OPTIONS") {
        cors = corsHeaders(req.headers, policy, true);
        res.writeHead(Object.keys(cors).length ? 204 : 403, cors).end();
        return;
      }
      cors = corsHeaders(req.headers, policy, false);
      checkOrigin(method, req.headers, policy);
      const found = this.opts.routes.match(method, url.pathname);
      if (!found)
        throw (
          this.opts.explainMissing?.(method, url.pathname) ??
          new SvcError("not_found", `no route ${method} ${url.pathname}`)
        );
      if ("allowed" in found) {
        errorHeaders = { allow: found.allowed.join(", ") };
        throw new SvcError(
          "method_not_allowed",
          `${method} is not allowed on ${url.pathname}; allowed: ${found.allowed.join(", ")}`,
        );
      }
      principal = authenticate(
        found.def.auth,
        { headers: req.headers, remoteAddress },
        this.opts.tokens(),
        this.opts.cookiePrincipal?.(method, req.headers),
      );
      if (found.def.auth !== "open") {
        const door = routeNeed(found.def.method, found.def.path);
        const what = door.id
          ? `${door.id} (${found.def.method} ${url.pathname})`
          : `${found.def.method} ${url.pathname}`;
        if (door.need === "token") requireToken(what, principal);
        else requireReach(what, found.def.remote ?? door.need, principal);
      }
      const body =
        method === "GET" || method === "DELETE"
          ? Buffer.alloc(0)
          : await readBody(req, found.def.maxBodyBytes ?? DEFAULT_MAX_BODY);
      const request: RouteRequest = {
        method: method as HttpMethod,
        path: url.pathname,
        params: found.params,
        query: url.searchParams,
        headers: req.headers,
        body,
        json: <T>() => parseJsonBody<T>(body),
        principal,
        remoteAddress,
        raw: req,
        res,
      };
      for (const [k, v] of Object.entries(cors)) res.setHeader(k, v);
      const out = await found.def.handler(request);
      if (out) send(res, out);
    } catch (err) {
      const e = toPublicError(err);
      const status = httpStatusFor(e.code);
      // The 503 of a daemon still starting is its answer to a probe (`/health`), not a failure.
      if (status >= 500 && !starting)
        this.opts.logger.error("request failed", {
          method,
          path: url.pathname,
          code: e.code,
          error: toSvcError(err).message,
        });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // An answer before the body was read (401, 404, 413, …): say `Connection: close` (a client
      // must not send its next request on this connection) and close the lingering way, so that
      // the client reads the answer instead of a reset.
      const unread = !req.readableEnded;
      if (unread) lingerAfterAnswer(req);
      const headers: Record<string, string> = { ...cors, ...errorHeaders, ...(unread ? { connection: "close" } : {}) };
      // A token was presented and refused when authentication failed with one (RFC 6750 §3.1).
      if (status === 401)
        headers["www-authenticate"] = bearerChallenge(
          req,
          url.pathname,
          principal === undefined && bearerOf(req.headers) !== undefined,
        );
      send(res, { status, headers, body: { error: e.toJSON() } });
    }
  }
}

export function send(res: ServerResponse, out: RouteResponse): void {
  const headers: Record<string, string> = { ...out.headers };
  let payload: Buffer | string | undefined;
  if (out.body === undefined) payload = undefined;
  else if (Buffer.isBuffer(out.body) || typeof out.body === "string") payload = out.body;
  else {
    payload = JSON.stringify(out.body);
    headers["content-type"] ??= "application/json; charset=utf-8";
  }
  res.writeHead(out.status, headers);
  res.end(payload);
}

/**
 * How a connection closed after an early answer lingers (nginx's lingering_timeout and
 * lingering_time): it reads and discards what the client is still sending, and is cut only once
 * the client has sent nothing for LINGER_IDLE_MS, or LINGER_MAX_MS after the answer at the latest.
 */
const LINGER_IDLE_MS = 2_000;
const LINGER_MAX_MS = 15_000;

/**
 * After an early answer sent with `Connection: close`: Node ends such a connection with
 * `socket.destroySoon()` as soon as the answer is out, which destroys it while the client is still
 * sending its body; the kernel then answers the unread bytes with a reset that can overtake the
 * answer on the client's side (EPIPE or ECONNRESET instead of the 413). Here the connection is
 * ended instead (the answer, then a FIN: the client reads both in order), the rest of the body is
 * read and discarded, and the socket is destroyed once the client stops sending, within the bounds
 * above.
 */
function lingerAfterAnswer(req: IncomingMessage): void {
  const socket = req.socket;
  const cut = () => socket.destroy();
  const idle = setTimeout(cut, LINGER_IDLE_MS);
  const latest = setTimeout(cut, LINGER_MAX_MS);
  idle.unref();
  latest.unref();
  socket.once("close", () => {
    clearTimeout(idle);
    clearTimeout(latest);
  });
  socket.destroySoon = () => void socket.end();
  req.on("data", () => idle.refresh());
  req.resume();
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > max) {
      req.resume();
      return reject(
        new SvcError("payload_too_large", `request body of ${declared} bytes exceeds the ${max}-byte limit`),
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        // Chunked bodies declare no length: stop keeping them at the limit and answer 413 (the
        // caller drains the rest a while before closing, so the client sees the answer).
        req.off("data", onData);
        chunks.length = 0;
        reject(new SvcError("payload_too_large", `request body exceeds the ${max}-byte limit`));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}
