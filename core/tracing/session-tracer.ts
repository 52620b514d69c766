/**
 * The spans of traced sessions (docs/tracing.md), in the OpenTelemetry GenAI semantic conventions:
 *
 *   invoke_agent <adapter>        the session, from its start to its end (root of its trace, or a
 *   │                             child of the span of the session that started it)
 *   ├─ deliver <sentinel>         a sentinel's event, from its arrival to the start of its turn
 *   ├─ turn <n>                   a prompt's turn, to its stop reason (or error)
 *   │  ├─ chat <model>            a model call the llm-endpoint sidecar carried
 *   │  └─ execute_tool <kind>     a tool call the agent reported (ACP tool_call → completed/failed)
 *   ├─ evaluate session_steward   a steward verdict (with a gen_ai.evaluation.result event)
 *   └─ execute_tool <mcp tool>    an MCP call of the daemon's tools carrying `_meta.traceparent`
 *
 * Loaded with the SDK (otel.ts) only when a session is traced. Every string attribute goes through
 * the session's redaction (attributes.ts).
 */
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanContext,
  type Tracer,
} from "@opentelemetry/api";
import type { Redaction } from "../redaction/redaction.js";
import type { Logger } from "../runtime/logger.js";
import type { ModelCallNote, TracedSessionStart } from "../sessions/session-tracing.js";
import type { TranscriptLine } from "../sessions/transcript.js";
import { jsonText, RedactedAttributes, textMessages } from "./attributes.js";
import { openPipeline, type TracePipeline } from "./otel.js";
import { settingsKey, type TraceExportSettings } from "./settings.js";
import { formatTraceparent, parseTraceparent } from "./traceparent.js";
import type { McpToolCall } from "../daemon/mcp/call-trace.js";

interface TracedSession {
  id: string;
  adapter: string;
  tracer: Tracer;
  root: Span;
  ctx: Context;
  attrs: RedactedAttributes;
  redaction: Redaction;
  turns: number;
  turn?: { span: Span; promptId: string };
  deliveries: Map<string, Span>;
  tools: Map<string, Span>;
  unfollow: () => void;
}

/** `session:verdict` (the steward, core/steward): `{sessionId, verdict, reason, suggestedPrompt?, trigger, model, at}`. */
export interface VerdictData {
  sessionId: string;
  verdict?: string;
  reason?: string;
  suggestedPrompt?: string;
  trigger?: string;
  model?: string;
  at?: number | string;
}

const OP = "gen_ai.operation.name";

export class SessionTracer {
  private readonly pipelines = new Map<string, TracePipeline>();
  private readonly sessions = new Map<string, TracedSession>();

  constructor(private readonly deps: { env: NodeJS.ProcessEnv; logger: Logger; now(): number }) {}

  traced(sessionId: string): boolean {
    return this.sessions.has(sessionId);
  }

  /** Opens the session's root span and follows its transcript; returns its agent's TRACEPARENT (and TRACESTATE). */
  open(start: TracedSessionStart, settings: TraceExportSettings, redaction: Redaction): Record<string, string> {
    const tracer = this.tracer(settings);
    const parent = start.joins ? this.sessions.get(start.joins) : undefined;
    const attrs = new RedactedAttributes(redaction, start.sessionId);
    const root = tracer.startSpan(
      `invoke_agent ${start.adapter}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: start.createdAt,
        attributes: {
          ...attrs.meta({
            [OP]: "invoke_agent",
            "gen_ai.agent.name": start.adapter,
            "gen_ai.agent.id": start.sessionId,
            "gen_ai.conversation.id": start.sessionId,
            "gen_ai.request.model": start.model,
            "svc.session.id": start.sessionId,
            "svc.session.parent_id": start.joins,
            "svc.swarm.run_id": start.run?.runId,
            "svc.swarm.step_id": start.run?.stepId,
            "gen_ai.workflow.name": start.run ? `swarm ${start.run.runId}` : undefined,
          }),
          "svc.trace.redactor": redaction.slug,
        },
      },
      parent ? parent.ctx : ROOT_CONTEXT,
    );
    const s: TracedSession = {
      id: start.sessionId,
      adapter: start.adapter,
      tracer,
      root,
      ctx: trace.setSpan(ROOT_CONTEXT, root),
      attrs,
      redaction,
      turns: 0,
      deliveries: new Map(),
      tools: new Map(),
      unfollow: () => undefined,
    };
    this.sessions.set(s.id, s);
    s.unfollow = start.transcript.follow((line) => this.onLine(s, line));
    return envOf(root.spanContext());
  }

  private tracer(settings: TraceExportSettings): Tracer {
    const key = settingsKey(settings);
    let p = this.pipelines.get(key);
    if (!p) {
      p = openPipeline(settings, this.deps.env, this.deps.logger, this.deps.now);
      this.pipelines.set(key, p);
      this.deps.logger.info("tracing: exporting traced sessions", {
        host: new URL(settings.url).host,
        protocol: settings.protocol,
        from: settings.source,
      });
    }
    return p.tracer;
  }

  private onLine(s: TracedSession, line: TranscriptLine): void {
    try {
      this.map(s, line);
    } catch (err) {
      this.deps.logger.warn("tracing: a transcript line could not be traced", {
        sessionId: s.id,
        type: line.type,
        error: (err as Error).message,
      });
    }
  }

  private map(s: TracedSession, line: TranscriptLine): void {
    const d = (line.data ?? {}) as Record<string, unknown>;
    switch (line.type) {
      case "prompt.received": {
        const ref = d.ref as { sentinelId?: string; eventId?: string } | undefined;
        const sender = d.sender as { kind?: string; id?: string } | undefined;
        if (!ref?.sentinelId || typeof d.promptId !== "string") return;
        const span = s.tracer.startSpan(
          `deliver ${ref.sentinelId}`,
          {
            kind: SpanKind.CONSUMER,
            startTime: line.at,
            attributes: s.attrs.meta({
              "svc.sentinel.id": ref.sentinelId,
              "svc.event.id": ref.eventId,
              "svc.prompt.id": d.promptId,
              "svc.prompt.sender": sender?.kind,
              "svc.delivery": typeof d.delivery === "string" ? d.delivery : undefined,
              "svc.urgency": typeof d.urgency === "string" ? d.urgency : undefined,
              "gen_ai.conversation.id": s.id,
            }),
          },
          s.ctx,
        );
        s.deliveries.set(d.promptId, span);
        return;
      }
      case "prompt": {
        if (typeof d.promptId !== "string") return;
        s.deliveries.get(d.promptId)?.end(line.at);
        s.deliveries.delete(d.promptId);
        s.turn?.span.end(line.at);
        s.turns++;
        const sender = d.sender as { kind?: string; id?: string } | undefined;
        const span = s.tracer.startSpan(
          `turn ${s.turns}`,
          {
            startTime: line.at,
            attributes: {
              ...s.attrs.meta({
                "svc.prompt.id": d.promptId,
                "svc.prompt.sender": sender?.kind,
                "svc.turn.number": s.turns,
                "gen_ai.conversation.id": s.id,
                "gen_ai.agent.name": s.adapter,
              }),
              ...(typeof d.text === "string"
                ? s.attrs.content({ "gen_ai.input.messages": textMessages("user", d.text) })
                : {}),
            },
          },
          s.ctx,
        );
        s.turn = { span, promptId: d.promptId };
        return;
      }
      case "turn.ended":
      case "turn.failed": {
        const turn = s.turn;
        if (!turn || turn.promptId !== d.promptId) return;
        const stop = typeof d.stopReason === "string" ? d.stopReason : undefined;
        turn.span.setAttributes({
          ...s.attrs.meta({
            "gen_ai.response.finish_reasons": stop ? [stop] : undefined,
            "error.type": typeof d.error === "string" ? "turn_failed" : undefined,
          }),
          ...(typeof d.text === "string" && d.text !== ""
            ? s.attrs.content({ "gen_ai.output.messages": textMessages("assistant", d.text, stop) })
            : {}),
        });
        if (typeof d.error === "string")
          turn.span.setStatus({
            code: SpanStatusCode.ERROR,
            message: s.attrs.text("error.message", d.error, false) ?? "",
          });
        turn.span.end(line.at);
        s.turn = undefined;
        return;
      }
      case "update":
        return this.onUpdate(s, line, d);
      case "session.stalled":
        s.root.addEvent(
          "svc.session.stalled",
          { ...(typeof d.stalledSinceMs === "number" ? { "svc.stalled_since_ms": d.stalledSinceMs } : {}) },
          line.at,
        );
        return;
      case "session.ended":
        return this.end(s, line.at, d);
    }
  }

  private onUpdate(s: TracedSession, line: TranscriptLine, d: Record<string, unknown>): void {
    const u = (d.update ?? {}) as Record<string, unknown>;
    const id = typeof u.toolCallId === "string" ? u.toolCallId : undefined;
    if (!id) return;
    if (d.kind === "tool_call" && !s.tools.has(id)) {
      const kind = typeof u.kind === "string" ? u.kind : "tool";
      const span = s.tracer.startSpan(
        `execute_tool ${kind}`,
        {
          startTime: line.at,
          attributes: {
            ...s.attrs.meta({
              [OP]: "execute_tool",
              "gen_ai.tool.call.id": id,
              "gen_ai.tool.name": kind,
              "gen_ai.tool.type": "function",
              "svc.tool.kind": kind,
            }),
            ...s.attrs.content({
              "gen_ai.tool.description": typeof u.title === "string" ? u.title : undefined,
              "gen_ai.tool.call.arguments": jsonText(u.rawInput),
            }),
          },
        },
        s.turn ? trace.setSpan(ROOT_CONTEXT, s.turn.span) : s.ctx,
      );
      s.tools.set(id, span);
    }
    const span = s.tools.get(id);
    if (!span) return;
    const status = typeof u.status === "string" ? u.status : undefined;
    if (status !== "completed" && status !== "failed") return;
    span.setAttributes(s.attrs.content({ "gen_ai.tool.call.result": jsonText(u.rawOutput ?? u.content) }));
    if (status === "failed") {
      span.setAttribute("error.type", "tool_failed");
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end(line.at);
    s.tools.delete(id);
  }

  modelCall(sessionId: string, call: ModelCallNote): void {
    const s = this.sessions.get(sessionId);
    if (!s) return;
    const start = Date.parse(call.at);
    const startTime = Number.isFinite(start) ? start : this.deps.now();
    const failed = call.status >= 400 || call.error !== undefined;
    const span = s.tracer.startSpan(
      `chat ${call.model}`,
      {
        kind: SpanKind.CLIENT,
        startTime,
        attributes: s.attrs.meta({
          [OP]: "chat",
          "gen_ai.provider.name": call.api,
          "gen_ai.request.model": call.requested ?? call.model,
          "gen_ai.response.model": call.model,
          "gen_ai.usage.input_tokens": call.inputTokens,
          "gen_ai.usage.output_tokens": call.outputTokens,
          "gen_ai.request.stream": call.stream,
          "gen_ai.response.time_to_first_chunk": call.firstByteMs !== undefined ? call.firstByteMs / 1000 : undefined,
          "gen_ai.conversation.id": s.id,
          "http.response.status_code": call.status,
          "error.type": failed ? (call.error !== undefined ? "upstream_error" : String(call.status)) : undefined,
        }),
      },
      s.turn ? trace.setSpan(ROOT_CONTEXT, s.turn.span) : s.ctx,
    );
    if (failed)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(call.error ? { message: s.attrs.text("error.message", call.error, false) ?? "" } : {}),
      });
    span.end(startTime + (call.latencyMs ?? 0));
  }

  /** A steward verdict (`session:verdict`): a short span under the session with a gen_ai.evaluation.result event. */
  verdict(v: VerdictData): void {
    const s = this.sessions.get(v.sessionId);
    if (!s) return;
    const at =
      typeof v.at === "number"
        ? v.at
        : typeof v.at === "string" && Number.isFinite(Date.parse(v.at))
          ? Date.parse(v.at)
          : this.deps.now();
    const evaluation = {
      ...s.attrs.meta({
        "gen_ai.evaluation.name": "session_steward",
        "gen_ai.evaluation.score.label": v.verdict,
        "svc.steward.trigger": v.trigger,
        "gen_ai.request.model": v.model,
      }),
      ...s.attrs.content({
        "gen_ai.evaluation.explanation": v.reason,
        "svc.steward.suggested_prompt": v.suggestedPrompt,
      }),
    };
    const span = s.tracer.startSpan(
      "evaluate session_steward",
      { startTime: at, attributes: { ...evaluation, "gen_ai.conversation.id": s.id } },
      s.ctx,
    );
    span.addEvent("gen_ai.evaluation.result", evaluation, at);
    span.end(at);
  }

  /** An MCP tool call carrying `_meta.traceparent`, from a traced session (by its token, or the trace it names). */
  async around<T extends { isError?: boolean }>(
    call: McpToolCall,
    sessionId: string | undefined,
    run: () => Promise<T>,
  ): Promise<T> {
    const parent = parseTraceparent(call.meta?.traceparent);
    const s = sessionId
      ? this.sessions.get(sessionId)
      : parent
        ? [...this.sessions.values()].find((x) => x.root.spanContext().traceId === parent.traceId)
        : undefined;
    if (!parent || !s) return run();
    const span = s.tracer.startSpan(
      `execute_tool ${call.tool}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          ...s.attrs.meta({
            [OP]: "execute_tool",
            "gen_ai.tool.name": call.tool,
            "gen_ai.tool.type": "extension",
            "gen_ai.tool.call.id": call.requestId !== undefined ? String(call.requestId) : undefined,
            "mcp.method.name": "tools/call",
            "gen_ai.conversation.id": s.id,
          }),
          ...s.attrs.content({ "gen_ai.tool.call.arguments": jsonText(call.args) }),
        },
      },
      trace.setSpanContext(ROOT_CONTEXT, parent),
    );
    try {
      const result = await run();
      if (result.isError) {
        span.setAttribute("error.type", "tool_error");
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return result;
    } finally {
      span.end();
    }
  }

  private end(s: TracedSession, at: number, exit: Record<string, unknown>): void {
    this.sessions.delete(s.id);
    s.unfollow();
    for (const span of [...s.deliveries.values(), ...s.tools.values(), ...(s.turn ? [s.turn.span] : [])]) span.end(at);
    const error = typeof exit.error === "string" ? exit.error : undefined;
    s.root.setAttributes(
      s.attrs.meta({
        "svc.session.exit_code": typeof exit.code === "number" ? exit.code : undefined,
        "svc.session.exit_signal": typeof exit.signal === "string" ? exit.signal : undefined,
        "svc.session.turns": s.turns,
      }),
    );
    if (error !== undefined && error !== "stopped") {
      s.root.setAttribute("error.type", "session_failed");
      s.root.setStatus({ code: SpanStatusCode.ERROR, message: s.attrs.text("error.message", error, false) ?? "" });
    }
    s.root.end(at);
  }

  /** The daemon stops: sessions still open end here, and what is queued is sent (within `timeoutMs`). */
  async shutdown(timeoutMs: number): Promise<void> {
    const now = this.deps.now();
    for (const s of [...this.sessions.values()]) {
      s.root.setAttribute("svc.session.open_at_shutdown", true);
      this.end(s, now, {});
    }
    await Promise.all([...this.pipelines.values()].map((p) => p.shutdown(timeoutMs)));
    this.pipelines.clear();
  }
}

function envOf(sc: SpanContext): Record<string, string> {
  const state = sc.traceState?.serialize();
  return { TRACEPARENT: formatTraceparent(sc), ...(state ? { TRACESTATE: state } : {}) };
}
