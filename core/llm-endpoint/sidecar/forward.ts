/**
 * One call upstream: the request (the client's body and API headers, the route's key in place of
 * the client's token) over a keep-alive agent, and the answer streamed back chunk by chunk as it
 * arrives, while a tap reads its usage. No headers within the timeout, or a stream idle that long:
 * 504; refused or reset: 502; each in the API's shape (a stream already under way ends with an
 * error event). A client gone mid-call destroys the upstream request.
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { RouteSpec } from "../protocol.js";
import type { Op } from "./apis.js";
import { errorEvent, sendError, type SidecarError } from "./errors.js";
import { SseUsageTap, usageOfJson, type Usage } from "./usage.js";
import { UsageChunkFilter } from "./usage-chunk-filter.js";

/** Where a route's calls go, parsed once per configure. */
export interface Target {
  https: boolean;
  host: string;
  port: number;
  /** The base URL's path without a trailing slash ("" or "/v1"). */
  basePath: string;
}

export function targetOf(route: RouteSpec): Target {
  const u = new URL(route.baseUrl);
  const https = u.protocol === "https:";
  return {
    https,
    host: u.hostname.replace(/^\[|\]$/g, ""),
    port: u.port ? Number(u.port) : https ? 443 : 80,
    basePath: u.pathname.replace(/\/+$/, ""),
  };
}

const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: Infinity, scheduling: "lifo" });
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: Infinity, scheduling: "lifo" });

/** Request headers the upstream gets from the client; everything else (its token above all) stays here. */
const PASSED = new Set([
  "content-type",
  "accept",
  "anthropic-version",
  "anthropic-beta",
  "openai-beta",
  "user-agent",
  "idempotency-key",
  "x-app",
  "x-goog-api-client",
]);

/** Response headers that belong to one hop. */
const HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "upgrade",
]);

export interface ForwardRequest {
  /** The API called: its provider's error shape and key header, its wire's usage. */
  op: Op;
  target: Target;
  key: NonNullable<RouteSpec["key"]>;
  /** The path upstream after the target's base path, query included. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The answer's usage counts (not for count_tokens). */
  counts: boolean;
  /** Drop the usage-only chunk of an OpenAI Chat Completions stream (the sidecar asked for it, the client did not). */
  dropUsageChunk: boolean;
  timeoutMs: number;
  /** performance.now() when the call started. */
  startedAt: number;
}

export interface ForwardOutcome {
  status: number;
  usage: Usage;
  /** The client went away before the answer ended; `reported`: whether what it got carried any usage. */
  clientGone?: { reported: boolean };
  firstByteMs?: number;
  error?: string;
}

const NO_USAGE: Usage = { inputTokens: 0, outputTokens: 0 };
const JSON_USAGE_CAP = 8 * 1024 * 1024;

export function forward(res: ServerResponse, f: ForwardRequest, done: (o: ForwardOutcome) => void): void {
  const api = f.op.provider;
  const upPath = f.target.basePath + f.path;
  const headers: OutgoingHttpHeaders = { "content-length": f.body.length, "accept-encoding": "identity" };
  for (const name in f.headers) {
    if (PASSED.has(name) || name.startsWith("x-stainless-")) headers[name] = f.headers[name];
  }
  if (f.key.kind === "apiKey" && api === "anthropic") headers["x-api-key"] = f.key.value;
  else if (f.key.kind === "apiKey" && api === "gemini") headers["x-goog-api-key"] = f.key.value;
  else headers.authorization = `Bearer ${f.key.value}`;

  let finished = false;
  let upReq: ReturnType<typeof httpRequest> | undefined;
  let upRes: IncomingMessage | undefined;
  let firstByteMs: number | undefined;
  let tap: SseUsageTap | undefined;
  let filter: UsageChunkFilter | undefined;
  let jsonChunks: Buffer[] | undefined;
  let jsonBytes = 0;
  let retried = false;
  let sse = false;

  const finish = (o: Omit<ForwardOutcome, "firstByteMs">): void => {
    if (finished) return;
    finished = true;
    clearTimeout(timer);
    done(firstByteMs === undefined ? o : { ...o, firstByteMs });
  };

  /** Ends the call with an error: a status of its own before any header, an error event after. */
  const fail = (e: SidecarError, error: string): void => {
    if (finished) return;
    upReq?.destroy();
    if (!res.headersSent) {
      sendError(res, api, e);
      finish({ status: e.status, usage: NO_USAGE, error });
      return;
    }
    const usage = tap?.usage() ?? NO_USAGE;
    if (sse) res.end(errorEvent(api, e));
    else res.destroy();
    finish({ status: e.status, usage, error });
  };

  const timer = setTimeout(() => {
    const what = upRes
      ? `upstream stream idle for ${f.timeoutMs} ms`
      : `upstream sent no response headers within ${f.timeoutMs} ms`;
    fail({ status: 504, kind: "api_error", message: `llm-endpoint: ${what}` }, what);
  }, f.timeoutMs);

  res.on("close", () => {
    if (finished || res.writableFinished) return;
    upReq?.destroy();
    finish({
      status: res.headersSent ? res.statusCode : 499,
      usage: tap?.usage() ?? NO_USAGE,
      clientGone: { reported: tap?.seen ?? false },
      error: "client disconnected",
    });
  });

  const onResponse = (r: IncomingMessage): void => {
    upRes = r;
    timer.refresh();
    const out: OutgoingHttpHeaders = {};
    for (const name in r.headers) if (!HOP.has(name)) out[name] = r.headers[name];
    sse = (r.headers["content-type"] ?? "").startsWith("text/event-stream");
    if (sse) {
      if (f.counts) tap = new SseUsageTap(f.op.wire);
      if (f.dropUsageChunk) {
        filter = new UsageChunkFilter();
        delete out["content-length"];
      }
    } else if (f.counts) {
      jsonChunks = [];
    }
    res.writeHead(r.statusCode ?? 502, out);
    r.on("data", (chunk: Buffer) => {
      if (finished) return;
      timer.refresh();
      tap?.feed(chunk);
      if (jsonChunks && (jsonBytes += chunk.length) <= JSON_USAGE_CAP) jsonChunks.push(chunk);
      if (firstByteMs === undefined && sse) firstByteMs = performance.now() - f.startedAt;
      const ok = filter ? res.write(filter.filter(chunk)) : res.write(chunk);
      if (!ok) {
        r.pause();
        res.once("drain", () => r.resume());
      }
    });
    r.on("end", () => {
      if (finished) return;
      res.end(filter?.flush());
      const usage = tap
        ? tap.usage()
        : jsonChunks && jsonBytes <= JSON_USAGE_CAP
          ? usageOfJson(f.op.wire, Buffer.concat(jsonChunks).toString("utf8"))
          : NO_USAGE;
      finish({ status: r.statusCode ?? 502, usage });
    });
    r.on("aborted", () =>
      fail(
        { status: 502, kind: "api_error", message: "llm-endpoint: the upstream connection was reset mid-answer" },
        "upstream reset mid-answer",
      ),
    );
    r.on("error", () =>
      fail(
        { status: 502, kind: "api_error", message: "llm-endpoint: the upstream connection was reset mid-answer" },
        "upstream reset mid-answer",
      ),
    );
  };

  const send = (): void => {
    const opts = {
      host: f.target.host,
      port: f.target.port,
      method: "POST",
      path: upPath,
      headers,
      agent: f.target.https ? httpsAgent : httpAgent,
    };
    const req = f.target.https ? httpsRequest(opts, onResponse) : httpRequest(opts, onResponse);
    upReq = req;
    req.on("error", (err: NodeJS.ErrnoException) => {
      if (finished || upRes) return;
      // A kept-alive socket the upstream closed while idle: the request never reached it, send it again once.
      if (req.reusedSocket && err.code === "ECONNRESET" && !retried) {
        retried = true;
        send();
        return;
      }
      const code = err.code ?? "error";
      const what =
        code === "ECONNREFUSED"
          ? "refused the connection"
          : code === "ECONNRESET"
            ? "reset the connection"
            : `failed (${code})`;
      fail(
        {
          status: 502,
          kind: "api_error",
          message: `llm-endpoint: the upstream ${f.target.host}:${f.target.port} ${what}`,
        },
        `upstream ${what}`,
      );
    });
    req.end(f.body);
  };
  send();
}
