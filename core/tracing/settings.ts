/**
 * Where traces go (docs/tracing.md): `defaults.traceEndpoint` (the traces URL, used as is), else
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), else `OTEL_EXPORTER_OTLP_ENDPOINT` with
 * `/v1/traces` appended, from the daemon's environment. Headers: `OTEL_EXPORTER_OTLP_HEADERS`, then
 * `OTEL_EXPORTER_OTLP_TRACES_HEADERS` over it; protocol: `…_TRACES_PROTOCOL`, else `…_PROTOCOL`,
 * else `http/protobuf` (the OpenTelemetry default). Header values may be secrets: they are only
 * ever handed to the exporter, never logged or described.
 */

export type TraceProtocol = "http/protobuf" | "http/json";

export interface TraceExportSettings {
  url: string;
  /** Where the URL came from, for the log: `defaults.traceEndpoint` or the variable's name. */
  source: string;
  protocol: TraceProtocol;
  headers: Record<string, string>;
}

export type SettingsResult = { ok: true; settings: TraceExportSettings } | { ok: false; reason: string };

const PROTOCOLS: readonly string[] = ["http/protobuf", "http/json"];

/** The export settings, or why there are none (no endpoint anywhere, an unusable URL or protocol). */
export function traceExportSettings(configured: string | undefined, env: NodeJS.ProcessEnv): SettingsResult {
  const found = endpoint(configured, env);
  if (!found)
    return {
      ok: false,
      reason:
        "no endpoint: set defaults.traceEndpoint, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT",
    };
  if (!/^https?:\/\//i.test(found.url) || !URL.canParse(found.url))
    return { ok: false, reason: `${found.source} is not an http(s) URL` };
  const protocol = (
    nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL) ??
    nonEmpty(env.OTEL_EXPORTER_OTLP_PROTOCOL) ??
    "http/protobuf"
  ).trim();
  if (!PROTOCOLS.includes(protocol))
    return {
      ok: false,
      reason: `OTLP protocol ${JSON.stringify(protocol)} is not supported (http/protobuf or http/json)`,
    };
  const headers = {
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_HEADERS),
    ...parseHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
  };
  return { ok: true, settings: { url: found.url, source: found.source, protocol: protocol as TraceProtocol, headers } };
}

function endpoint(configured: string | undefined, env: NodeJS.ProcessEnv): { url: string; source: string } | undefined {
  if (configured) return { url: configured, source: "defaults.traceEndpoint" };
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (traces) return { url: traces.trim(), source: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" };
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  if (base) return { url: base.trim().replace(/\/+$/, "") + "/v1/traces", source: "OTEL_EXPORTER_OTLP_ENDPOINT" };
  return undefined;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v !== undefined && v.trim() !== "" ? v : undefined;
}

/** `k1=v1,k2=v2` with percent-encoded values (the OpenTelemetry spec's format); malformed entries are skipped. */
export function parseHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of (raw ?? "").split(",")) {
    const i = entry.indexOf("=");
    if (i <= 0) continue;
    const key = entry.slice(0, i).trim().toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(key)) continue;
    let value = entry.slice(i + 1).trim();
    try {
      value = decodeURIComponent(value);
    } catch {
      // kept as written
    }
    out[key] = value;
  }
  return out;
}

/** A key naming the settings, for one exporter per distinct destination; never shown (it holds header values). */
export function settingsKey(s: TraceExportSettings): string {
  return JSON.stringify([s.url, s.protocol, Object.entries(s.headers).sort()]);
}
