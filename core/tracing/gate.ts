/**
 * Tracing's door into the daemon, always loaded and cheap: it decides whether a session is traced
 * (the start request's `extTracing`, else traced when the session it joins is, else
 * `defaults.extTracing`), finds the endpoint (settings.ts), and only then loads the SDK and the
 * span mapping (session-tracer.ts, otel.ts) with a dynamic import. Tracing on with no endpoint is
 * said once in the log and exports nothing. Nothing here ever fails a session: a load or export
 * error is logged and the session runs untraced.
 */
import type { ConfigService } from "../config/config-service.js";
import type { McpCallTrace, McpToolCall } from "../daemon/mcp/call-trace.js";
import type { RedactionService } from "../redaction/redaction.js";
import { traceRedactorSlug } from "../redaction/slug.js";
import type { Logger } from "../runtime/logger.js";
import type { ModelCallNote, SessionTracing, TracedSessionStart } from "../sessions/session-tracing.js";
import type { SessionTracer, VerdictData } from "./session-tracer.js";
import { traceExportSettings } from "./settings.js";

export interface TracingGateDeps {
  config: ConfigService;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** The daemon's redaction service (core/redaction). */
  redaction: RedactionService;
  /** The session a session token belongs to. */
  sessionOf(token: string | undefined): string | undefined;
  now(): number;
}

export class TracingGate implements SessionTracing, McpCallTrace {
  private tracer?: SessionTracer;
  private loading?: Promise<SessionTracer>;
  private said = new Set<string>();

  constructor(private readonly d: TracingGateDeps) {}

  async open(start: TracedSessionStart): Promise<Record<string, string> | undefined> {
    const defaults = this.d.config.current().effective.defaults ?? {};
    const joinsTraced = start.joins !== undefined && this.tracer?.traced(start.joins) === true;
    if (!(start.requested ?? (joinsTraced || defaults.extTracing === true))) return undefined;
    const found = traceExportSettings(defaults.traceEndpoint, this.d.env);
    if (!found.ok) {
      this.sayOnce(`tracing is on but nothing is exported: ${found.reason}`);
      return undefined;
    }
    try {
      const tracer = await this.load();
      const redaction = await this.d.redaction.forSlug(traceRedactorSlug(this.d.config.current().effective));
      return tracer.open({ ...start, ...(joinsTraced ? {} : { joins: undefined }) }, found.settings, redaction);
    } catch (err) {
      this.sayOnce(`tracing could not start; sessions run untraced: ${(err as Error).message}`);
      return undefined;
    }
  }

  modelCall(sessionId: string, call: ModelCallNote): void {
    this.tracer?.modelCall(sessionId, call);
  }

  verdict(data: unknown): void {
    const v = data as VerdictData | undefined;
    if (this.tracer && typeof v?.sessionId === "string") this.tracer.verdict(v);
  }

  around<T extends { isError?: boolean }>(call: McpToolCall, run: () => Promise<T>): Promise<T> {
    if (!this.tracer) return run();
    return this.tracer.around(call, this.d.sessionOf(call.sessionToken), run);
  }

  /** Ends the spans of sessions still open and sends what is queued, within `timeoutMs`. */
  async shutdown(timeoutMs: number): Promise<void> {
    const tracer = this.tracer ?? (await this.loading?.catch(() => undefined));
    await tracer?.shutdown(timeoutMs);
  }

  private load(): Promise<SessionTracer> {
    this.loading ??= import("./session-tracer.js").then(({ SessionTracer }) => {
      this.tracer = new SessionTracer({ env: this.d.env, logger: this.d.logger, now: this.d.now });
      return this.tracer;
    });
    return this.loading;
  }

  private sayOnce(message: string): void {
    if (this.said.has(message)) return;
    this.said.add(message);
    this.d.logger.warn(message);
  }
}
