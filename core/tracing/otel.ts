/**
 * The OpenTelemetry pipeline of one destination: a tracer provider whose batch span processor
 * (bounded queue: spans past it are dropped, never waited for) sends to an OTLP/HTTP exporter
 * (protobuf or JSON). Loaded only when a session is traced (gate.ts imports this module on first
 * use), so a daemon that traces nothing never loads the SDK.
 *
 * An endpoint that fails never blocks a session or the daemon: the exporter runs in the batch
 * processor's background, its first failure is logged (host only, never the URL's path or the
 * headers), and further ones at most once per {@link FAILURE_LOG_EVERY_MS} with a count.
 */
import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter as JsonTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from "@opentelemetry/semantic-conventions";
import type { Logger } from "../runtime/logger.js";
import { SVC_VERSION } from "../version.js";
import type { TraceExportSettings } from "./settings.js";

export const FAILURE_LOG_EVERY_MS = 10 * 60_000;
const EXPORT_TIMEOUT_MS = 10_000;
const MAX_QUEUE = 2048;
const MAX_BATCH = 512;
const DEFAULT_DELAY_MS = 5000;

export interface TracePipeline {
  readonly tracer: Tracer;
  /** Sends what is queued and stops; resolves within `timeoutMs` even when the endpoint does not answer. */
  shutdown(timeoutMs: number): Promise<void>;
}

type ExportCallback = Parameters<SpanExporter["export"]>[1];

/** Hands batches to the OTLP exporter and tells its failures to the log, once and then rate-limited. */
class ReportingExporter implements SpanExporter {
  private failing = false;
  private lastLoggedAt = 0;
  private suppressed = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly host: string,
    private readonly logger: Logger,
    private readonly now: () => number,
  ) {}

  export(spans: ReadableSpan[], done: ExportCallback): void {
    try {
      this.inner.export(spans, (result) => {
        this.report(result.code === 0 ? undefined : (result.error?.message ?? "export failed"), spans.length);
        done(result);
      });
    } catch (err) {
      this.report((err as Error).message, spans.length);
      done({ code: 1, error: err as Error });
    }
  }

  private report(error: string | undefined, count: number): void {
    if (error === undefined) {
      if (this.failing) this.logger.info("tracing: the OTLP endpoint accepts spans again", { host: this.host });
      this.failing = false;
      this.suppressed = 0;
      return;
    }
    const now = this.now();
    if (!this.failing || now - this.lastLoggedAt >= FAILURE_LOG_EVERY_MS) {
      this.logger.warn("tracing: spans could not be sent to the OTLP endpoint; they are dropped, sessions go on", {
        host: this.host,
        error: error.slice(0, 200),
        spans: count,
        ...(this.suppressed ? { failuresSinceLastLog: this.suppressed } : {}),
      });
      this.lastLoggedAt = now;
      this.suppressed = 0;
    } else this.suppressed++;
    this.failing = true;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export function openPipeline(
  settings: TraceExportSettings,
  env: NodeJS.ProcessEnv,
  logger: Logger,
  now: () => number = Date.now,
): TracePipeline {
  const options = { url: settings.url, headers: { ...settings.headers }, timeoutMillis: EXPORT_TIMEOUT_MS };
  const exporter = settings.protocol === "http/json" ? new JsonTraceExporter(options) : new ProtoTraceExporter(options);
  const delay = Number(env.OTEL_BSP_SCHEDULE_DELAY);
  const processor = new BatchSpanProcessor(new ReportingExporter(exporter, new URL(settings.url).host, logger, now), {
    maxQueueSize: MAX_QUEUE,
    maxExportBatchSize: MAX_BATCH,
    scheduledDelayMillis: Number.isFinite(delay) && delay >= 0 ? delay : DEFAULT_DELAY_MS,
    exportTimeoutMillis: EXPORT_TIMEOUT_MS,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: "svc", [ATTR_SERVICE_VERSION]: SVC_VERSION }),
    spanProcessors: [processor],
  });
  return {
    tracer: provider.getTracer("svc", SVC_VERSION),
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          logger.warn("tracing: the OTLP endpoint did not take the last spans in time; they are dropped", {
            host: new URL(settings.url).host,
            waitedMs: timeoutMs,
          });
          resolve();
        }, timeoutMs);
        timer.unref();
      });
      await Promise.race([provider.shutdown().catch(() => undefined), late]);
      clearTimeout(timer);
    },
  };
}
