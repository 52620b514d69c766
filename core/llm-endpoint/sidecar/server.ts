/**
 * The sidecar's HTTP server (loopback only) and its dispatch: which API a path is (apis.ts), whose
 * token the call carries, whether its body is what that API takes, which route serves the model,
 * whether the session may call now; then the call goes upstream. Every call whose token names a
 * session ends in exactly one `call` record; each refusal by a limit, a block or a missing key
 * also sends `refused`. A WebSocket upgrade is refused (upgrade.ts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { CallRecord, ChildMessage, LlmProvider, RefusalReason } from "../protocol.js";
import { PROVIDER_ADAPTERS } from "../../config/model-catalog.js";
import {
  bodyProblem,
  isPlainObject,
  isStream,
  type Op,
  opOf,
  providerOfPath,
  queryKey,
  requestedModel,
  SERVED,
  upstreamPath,
} from "./apis.js";
import { sendError, type SidecarError } from "./errors.js";
import { forward, type ForwardOutcome } from "./forward.js";
import type { Grant } from "./grants.js";
import { isRefusal, type Refusal } from "./limits.js";
import { reservationOf } from "./reservation.js";
import { resolveRoute } from "./routing.js";
import type { SidecarState } from "./state.js";
import { refuseUpgrade } from "./upgrade.js";

/** Anthropic allows 32 MB requests; more is refused before it is read. */
const MAX_BODY = 32 * 1024 * 1024;

const BUDGET_CODE = {
  sessionTokens: "session_token_budget_exhausted",
  runTokens: "run_token_budget_exhausted",
  dayTokens: "day_token_budget_exhausted",
};

export function createSidecarServer(state: SidecarState, send: (m: ChildMessage) => void): Server {
  const server = createServer({ noDelay: true }, (req, res) => {
    try {
      handle(state, send, req, res);
    } catch {
      if (!res.headersSent)
        sendError(res, "anthropic", { status: 500, kind: "api_error", message: "llm-endpoint: internal error" });
      else res.destroy();
    }
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  server.on("upgrade", (req: IncomingMessage, socket) => {
    const { path, op, api, grant } = dispatch(state, req);
    const status = refuseUpgrade(socket, api, path, op !== undefined);
    if (grant)
      new Call(state, send, grant, api, path, Date.now(), performance.now()).end({
        status,
        error: "websocket upgrade refused",
      });
  });
  return server;
}

/** A request's path (without its query), operation, error shape and grant. */
function dispatch(state: SidecarState, req: IncomingMessage) {
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const op = opOf(path);
  const api: LlmProvider = op?.provider ?? providerOfPath(path);
  const grant = state.grants.identify(req.headers, queryKey(op, url));
  return { url, path, op, api, grant };
}

function handle(state: SidecarState, send: (m: ChildMessage) => void, req: IncomingMessage, res: ServerResponse): void {
  const startedAt = performance.now();
  const wallMs = Date.now();
  const { url, path, op, api, grant } = dispatch(state, req);

  if (!op || req.method !== "POST") {
    const message = op
      ? `llm-endpoint: ${path} takes POST, not ${req.method}`
      : `llm-endpoint: no ${req.method} ${path}; it serves ${SERVED}`;
    sendError(res, api, {
      status: op ? 405 : 404,
      kind: "not_found_error",
      code: "unknown_url",
      message,
      headers: op ? { allow: "POST" } : undefined,
    });
    if (grant)
      new Call(state, send, grant, api, path, wallMs, startedAt).end({ status: op ? 405 : 404, error: "unknown path" });
    return;
  }
  if (!grant) {
    sendError(res, api, {
      status: 401,
      kind: "authentication_error",
      message:
        "llm-endpoint: the API key is not a valid session token (each svc session gets its own; it stops working when the session ends)",
    });
    return;
  }

  const c = new Call(state, send, grant, api, path, wallMs, startedAt);
  const chunks: Buffer[] = [];
  let size = 0;
  req.on("data", (chunk: Buffer) => {
    if ((size += chunk.length) > MAX_BODY) {
      if (c.ended) return;
      res.setHeader("connection", "close");
      c.refuse(
        res,
        {
          status: 413,
          kind: "invalid_request_error",
          message: `llm-endpoint: the request body is over ${MAX_BODY} bytes`,
        },
        {},
      );
      req.destroy();
      return;
    }
    chunks.push(chunk);
  });
  res.on("close", () => {
    // Once forwarding, the forwarder records a client gone (with what the client got so far).
    if (!c.forwarding && !res.writableFinished) c.end({ status: 499, error: "client disconnected" });
  });
  req.on("end", () => {
    if (!c.ended) c.start(req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), url, op);
  });
}

/** One call of a granted session, from its body to its record. */
class Call {
  ended = false;
  forwarding = false;

  constructor(
    private readonly state: SidecarState,
    private readonly send: (m: ChildMessage) => void,
    private readonly grant: Grant,
    private readonly api: LlmProvider,
    private readonly path: string,
    private readonly wallMs: number,
    private readonly startedAt: number,
  ) {}

  /** Sends the call's one record. */
  end(fields: Partial<CallRecord> & { status: number }): void {
    if (this.ended) return;
    this.ended = true;
    this.state.calls++;
    const g = this.grant;
    this.send({
      type: "call",
      record: {
        at: new Date(this.wallMs).toISOString(),
        sessionId: g.sessionId,
        ...(g.runId !== undefined && { runId: g.runId }),
        api: this.api,
        path: this.path,
        route: "",
        model: "",
        stream: false,
        inputTokens: 0,
        outputTokens: 0,
        ...fields,
        latencyMs: Math.round((performance.now() - this.startedAt) * 1000) / 1000,
      },
    });
  }

  refuse(res: ServerResponse, e: SidecarError, fields: Partial<CallRecord>, reason?: RefusalReason): void {
    sendError(res, this.api, e);
    const g = this.grant;
    if (reason)
      this.send({
        type: "refused",
        sessionId: g.sessionId,
        ...(g.runId !== undefined && { runId: g.runId }),
        reason,
        status: e.status,
        message: e.message,
      });
    this.end({ ...fields, status: e.status, error: e.message });
  }

  /** The body is in: check it, route it, admit it, forward it. */
  start(req: IncomingMessage, res: ServerResponse, raw: Buffer, url: string, op: Op): void {
    const { state, api, grant } = this;
    const bad = (param: string, message: string) =>
      this.refuse(res, { status: 400, kind: "invalid_request_error", param, message: `llm-endpoint: ${message}` }, {});
    let body: any;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch (err) {
      return bad("body", `the request body is not valid JSON (${(err as Error).message.slice(0, 200)})`);
    }
    if (!isPlainObject(body)) return bad("body", "the request body must be a JSON object");
    const problem = bodyProblem(op, body);
    if (problem) return bad(problem.param, problem.message);
    const requested = requestedModel(op, body);
    const stream = isStream(op, body);

    const resolved = resolveRoute(state.table, api, requested);
    if ("error" in resolved) return this.refuse(res, resolved.error, { model: requested, stream });
    const { route, model, key } = resolved;
    const fields: Partial<CallRecord> = { route: route.name, model, stream, ...(model !== requested && { requested }) };
    if (!key) {
      const slug = route.keyFrom ?? PROVIDER_ADAPTERS[route.provider];
      const message = `llm-endpoint: route "${route.name}" has no key: set defaults.adapters.${slug}.auth (apiKey or token) or credentials.json llm-endpoint/${route.name}`;
      return this.refuse(
        res,
        { status: 401, kind: "authentication_error", code: "route_has_no_key", message },
        fields,
        "no-key",
      );
    }
    const blocked = state.grants.blockedReason(grant.sessionId);
    if (blocked !== undefined) {
      return this.refuse(
        res,
        {
          status: 403,
          kind: "permission_error",
          code: "session_blocked",
          message: `llm-endpoint: this session may make no more calls: ${blocked}`,
        },
        fields,
        "blocked",
      );
    }
    const { counts } = op;
    const reservation = reservationOf(op.wire, body, raw.length, counts);
    const admitted = state.limits.admit(grant.sessionId, grant.runId, this.startedAt, this.wallMs, reservation);
    if (isRefusal(admitted)) return this.refuse(res, limitError(admitted), fields, admitted.reason);

    // Gemini's model is in the path (upstreamPath), the others' in the body.
    let rewritten = model !== requested && op.wire !== "gemini";
    if (rewritten) body.model = model;
    let dropUsageChunk = false;
    const so = body.stream_options;
    if (op.wire === "openai" && stream && (so === undefined || (isPlainObject(so) && so.include_usage !== true))) {
      body.stream_options = { ...so, include_usage: true };
      dropUsageChunk = rewritten = true;
    }
    this.forwarding = true;
    const f = {
      op,
      target: state.targets.get(route.name)!,
      key,
      path: upstreamPath(op, url, model),
      headers: req.headers,
      body: rewritten ? Buffer.from(JSON.stringify(body)) : raw,
      counts,
      dropUsageChunk,
      timeoutMs: state.upstreamTimeoutMs,
      startedAt: this.startedAt,
    };
    const ended = (o: ForwardOutcome): void => {
      // A client gone before any usage reached it is charged its reservation: the upstream may have spent it.
      const estimated = o.clientGone && !o.clientGone.reported && admitted.tokens > 0 ? admitted.tokens : undefined;
      state.limits.settle(admitted, estimated ?? o.usage.inputTokens + o.usage.outputTokens, Date.now());
      this.end({
        ...fields,
        status: o.status,
        inputTokens: o.usage.inputTokens,
        outputTokens: o.usage.outputTokens,
        ...(estimated !== undefined && { estimatedTokens: estimated }),
        ...(o.firstByteMs !== undefined && { firstByteMs: Math.round(o.firstByteMs * 1000) / 1000 }),
        ...(o.error !== undefined && { error: o.error }),
      });
    };
    try {
      forward(res, f, ended);
    } catch (err) {
      // Nothing went upstream: the reservation goes back (settling twice is a no-op).
      state.limits.settle(admitted, 0, Date.now());
      throw err;
    }
  }
}

function limitError(r: Refusal): SidecarError {
  if (r.status === 429) {
    return {
      status: 429,
      kind: "rate_limit_error",
      message: r.message,
      headers: { "retry-after": String(r.retryAfter ?? 1) },
    };
  }
  return {
    status: 403,
    kind: "permission_error",
    openaiType: "insufficient_quota",
    code: r.budget ? BUDGET_CODE[r.budget] : undefined,
    message: r.message,
  };
}
