import { describe, expect, it } from "vitest";
import { parseHeaders, traceExportSettings } from "../../../core/tracing/settings.js";

describe("trace export settings: config over the OTel variables", () => {
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/",
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:4318/custom",
  };

  it("defaults.traceEndpoint is used as is, over both variables", () => {
    expect(traceExportSettings("https://x.example/otel/v1/traces", env)).toMatchObject({
      ok: true,
      settings: { url: "https://x.example/otel/v1/traces", source: "defaults.traceEndpoint" },
    });
  });
  it("then OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is, then OTEL_EXPORTER_OTLP_ENDPOINT with /v1/traces", () => {
    expect(traceExportSettings(undefined, env)).toMatchObject({
      ok: true,
      settings: { url: "http://traces:4318/custom" },
    });
    expect(traceExportSettings(undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/" })).toMatchObject({
      ok: true,
      settings: { url: "http://collector:4318/v1/traces", protocol: "http/protobuf" },
    });
  });
  it("no endpoint anywhere, a bad URL, or grpc: why, and no settings", () => {
    expect(traceExportSettings(undefined, {})).toMatchObject({
      ok: false,
      reason: expect.stringContaining("no endpoint"),
    });
    expect(traceExportSettings(undefined, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "collector:4318" })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("not an http(s) URL"),
    });
    expect(traceExportSettings(undefined, { ...env, OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" })).toMatchObject({
      ok: false,
      reason: expect.stringContaining("grpc"),
    });
  });
  it("the traces protocol over the general one; json supported", () => {
    expect(
      traceExportSettings(undefined, {
        ...env,
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      }),
    ).toMatchObject({ ok: true, settings: { protocol: "http/json" } });
  });
  it("headers: the traces variable's entries over the general one's, values percent-decoded", () => {
    const s = traceExportSettings(undefined, {
      ...env,
      OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20abc,x-a=1",
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: "x-a=2,bad",
    });
    expect(s).toMatchObject({ ok: true, settings: { headers: { authorization: "Basic abc", "x-a": "2" } } });
    expect(parseHeaders("=x, k = v ")).toEqual({ k: "v" });
  });
});
