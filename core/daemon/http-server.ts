/**
 * The daemon's HTTP server: Host and Origin guards, CORS, bearer auth per route, body caps,
 * JSON responses and the one error body shape `{error: {code, message, details}}`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { HttpMethod, RouteRequest, RouteResponse } from "../plugin-api/http.js";
import { SvcError, httpStatusFor, toPublicError, toSvcError } from "../errors.js";
import type { Logger } from "../runtime/logger.js";
import { authenticate, type AuthTokens } from "./auth.js";
import { parseJsonBody } from "./json-body.js";
import { checkHost, checkOrigin, corsHeaders, type OriginPolicy } from "./origin-guard.js";
import type { RouteTable } from "./route-table.js";

export interface HttpServerOptions {
  routes: RouteTable;
  logger: Logger;
  tokens: () => AuthTokens;
  policy: () => OriginPolicy;
  bind: string;
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
    try {
      if (!this.started) throw new SvcError("unavailable", "the daemon is starting; try again in a moment");
      checkHost(req.headers, this.opts.bind);
      if (method === "OPTIONS") {
        cors = corsHeaders(req.headers, policy, true);
        res.writeHead(Object.keys(cors).length ? 204 : 403, cors).end();
        return;
      }
      cors = corsHeaders(req.headers, policy, false);
      checkOrigin(method, req.headers, policy);
      const found = this.opts.routes.match(method, url.pathname);
      if (!found) throw this.opts.explainMissing?.(method, url.pathname) ?? new SvcError("not_found", `no route ${method} ${url.pathname}`);
      if ("allowed" in found) {
        throw new SvcError("method_not_allowed", `${method} is not allowed on ${url.pathname}; allowed: ${found.allowed.join(", ")}`);
      }
      const principal = authenticate(found.def.auth, { headers: req.headers, remoteAddress }, this.opts.tokens());
      const body = method === "GET" || method === "DELETE" ? Buffer.alloc(0) : await readBody(req, found.def.maxBodyBytes ?? DEFAULT_MAX_BODY);
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
      if (status >= 500) this.opts.logger.error("request failed", { method, path: url.pathname, code: e.code, error: toSvcError(err).message });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      // An answer before the body was read (401, 404, 413, …): drain what the client is still
      // sending, so that it reads the answer instead of a reset, and close the connection only past
      // the drain's bounds. No `Connection: close`: with it Node destroys the socket as soon as the
      // answer is out, while the body is still arriving, and the client gets EPIPE or a reset.
      if (!req.readableEnded) drainThenClose(req, res);
      send(res, { status, headers: cors, body: { error: e.toJSON() } });
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

/** How long, and how many bytes, an unread body is drained after an early answer before the connection is closed. */
const DRAIN_MS = 2_000;
const DRAIN_BYTES = 8 * 1024 * 1024;
/** How long a closed connection still takes (and discards) what the client sends before it is cut. */
const LINGER_MS = 2_000;

/**
 * After an early answer, reads and discards the rest of the body, for up to DRAIN_MS or
 * DRAIN_BYTES. Past either, the connection is closed the lingering way: the answer, then a FIN
 * (the client reads the answer and the end of the stream in order), and the socket is destroyed
 * only LINGER_MS later. Destroying it at once, with the client's bytes still arriving, makes the
 * kernel send a reset that can overtake the unread answer on the client's side.
 */
function drainThenClose(req: IncomingMessage, res: ServerResponse): void {
  let drained = 0;
  let closing = false;
  const close = () => {
    if (closing) return;
    closing = true;
    req.socket.end();
    setTimeout(() => req.socket.destroy(), LINGER_MS).unref();
  };
  req.on("data", (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_BYTES) close();
  });
  req.resume();
  res.on("finish", () => {
    if (req.readableEnded) return;
    const timer = setTimeout(close, DRAIN_MS);
    timer.unref();
    req.once("end", () => clearTimeout(timer));
  });
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > max) {
      req.resume();
      return reject(new SvcError("payload_too_large", `request body of ${declared} bytes exceeds the ${max}-byte limit`));
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
