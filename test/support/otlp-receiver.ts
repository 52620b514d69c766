/**
 * An OTLP/HTTP trace receiver on loopback that decodes what an exporter sends: `http/protobuf`
 * with a small protobuf wire-format reader over the OTLP trace schema (opentelemetry-proto
 * trace/v1, common/v1; no generated code ships in node_modules), and `http/json`. Keeps every raw
 * body (after gzip) so tests can look for bytes that must never leave.
 */
import { createServer, type Server } from "node:http";
import { gunzipSync } from "node:zlib";

export interface DecodedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  status: { code: number; message: string };
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  url: string;
  /** The traces URL (`…/v1/traces`). */
  tracesUrl: string;
  spans: DecodedSpan[];
  bodies: Buffer[];
  requests: Array<{ contentType: string; headers: Record<string, string | string[] | undefined> }>;
  /** Answer every request with this status from now on (e.g. 503), or 200 again. */
  answer(status: number): void;
  /** Resolves once `pick` finds something among the decoded spans. */
  waitFor<T>(pick: (spans: DecodedSpan[]) => T | undefined, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: DecodedSpan[] = [];
  const bodies: Buffer[] = [];
  const requests: OtlpReceiver["requests"] = [];
  const waiters = new Set<() => void>();
  let status = 200;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let body = Buffer.concat(chunks);
      if (req.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const contentType = String(req.headers["content-type"] ?? "");
      requests.push({ contentType, headers: req.headers });
      if (status !== 200) {
        res.writeHead(status).end();
        return;
      }
      bodies.push(body);
      const json = contentType.startsWith("application/json");
      spans.push(...(json ? decodeJson(JSON.parse(body.toString("utf8"))) : decodeProtobuf(body)));
      res
        .writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" })
        .end(json ? "{}" : undefined);
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    tracesUrl: `${url}/v1/traces`,
    spans,
    bodies,
    requests,
    answer: (s) => (status = s),
    waitFor(pick, what, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const v = pick(spans);
          if (v === undefined) return false;
          clearTimeout(timer);
          waiters.delete(onBody);
          resolve(v);
          return true;
        };
        const onBody = () => void check();
        const timer = setTimeout(() => {
          waiters.delete(onBody);
          reject(new Error(`timed out waiting for ${what}; spans: ${spans.map((s) => s.name).join(", ")}`));
        }, timeoutMs);
        if (!check()) waiters.add(onBody);
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

// ---- protobuf wire format -------------------------------------------------------------------

type Field = { no: number; wire: number; value: bigint | Buffer };

function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (wire === 0) out.push({ no, wire, value: varint() });
    else if (wire === 1) {
      out.push({ no, wire, value: buf.subarray(i, i + 8) });
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({ no, wire, value: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 5) {
      out.push({ no, wire, value: buf.subarray(i, i + 4) });
      i += 4;
    } else throw new Error(`unsupported protobuf wire type ${wire}`);
  }
  return out;
}

const bytes = (f: Field) => f.value as Buffer;
const str = (f: Field) => bytes(f).toString("utf8");
const all = (fs: Field[], no: number) => fs.filter((f) => f.no === no);
const one = (fs: Field[], no: number) => fs.find((f) => f.no === no);

function anyValue(buf: Buffer): unknown {
  const f = fields(buf)[0];
  if (!f) return undefined;
  switch (f.no) {
    case 1:
      return str(f);
    case 2:
      return f.value === 1n;
    case 3:
      return Number(BigInt.asIntN(64, f.value as bigint));
    case 4:
      return bytes(f).readDoubleLE(0);
    case 5:
      return all(fields(bytes(f)), 1).map((v) => anyValue(bytes(v)));
    case 6:
      return keyValues(all(fields(bytes(f)), 1));
    case 7:
      return bytes(f).toString("hex");
    default:
      return undefined;
  }
}

function keyValues(kvs: Field[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs) {
    const fs = fields(bytes(kv));
    const key = one(fs, 1);
    const value = one(fs, 2);
    if (key) out[str(key)] = value ? anyValue(bytes(value)) : undefined;
  }
  return out;
}

function decodeProtobuf(body: Buffer): DecodedSpan[] {
  const out: DecodedSpan[] = [];
  for (const rs of all(fields(body), 1)) {
    const rsf = fields(bytes(rs));
    const res = one(rsf, 1);
    const resource = res ? keyValues(all(fields(bytes(res)), 1)) : {};
    for (const ss of all(rsf, 2)) {
      for (const sp of all(fields(bytes(ss)), 2)) {
        const f = fields(bytes(sp));
        const hex = (no: number) => (one(f, no) ? bytes(one(f, no)!).toString("hex") : "");
        const status = one(f, 15) ? fields(bytes(one(f, 15)!)) : [];
        out.push({
          traceId: hex(1),
          spanId: hex(2),
          parentSpanId: hex(4),
          name: one(f, 5) ? str(one(f, 5)!) : "",
          kind: Number(one(f, 6)?.value ?? 0n),
          startNs: one(f, 7) ? bytes(one(f, 7)!).readBigUInt64LE(0) : 0n,
          endNs: one(f, 8) ? bytes(one(f, 8)!).readBigUInt64LE(0) : 0n,
          attributes: keyValues(all(f, 9)),
          events: all(f, 11).map((e) => {
            const ef = fields(bytes(e));
            return { name: one(ef, 2) ? str(one(ef, 2)!) : "", attributes: keyValues(all(ef, 3)) };
          }),
          status: { code: Number(one(status, 3)?.value ?? 0n), message: one(status, 2) ? str(one(status, 2)!) : "" },
          resource,
        });
      }
    }
  }
  return out;
}

// ---- JSON -----------------------------------------------------------------------------------

type JsonAny = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAny[] };
  kvlistValue?: { values?: JsonKv[] };
};
type JsonKv = { key: string; value?: JsonAny };

function jsonAny(v: JsonAny | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(jsonAny);
  if (v.kvlistValue) return jsonKvs(v.kvlistValue.values);
  return undefined;
}

function jsonKvs(kvs: JsonKv[] | undefined): Record<string, unknown> {
  return Object.fromEntries((kvs ?? []).map((kv) => [kv.key, jsonAny(kv.value)]));
}

function decodeJson(body: any): DecodedSpan[] {
  const out: DecodedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const resource = jsonKvs(rs.resource?.attributes);
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        out.push({
          traceId: s.traceId,
          spanId: s.spanId,
          parentSpanId: s.parentSpanId ?? "",
          name: s.name,
          kind: s.kind ?? 0,
          startNs: BigInt(s.startTimeUnixNano ?? 0),
          endNs: BigInt(s.endTimeUnixNano ?? 0),
          attributes: jsonKvs(s.attributes),
          events: (s.events ?? []).map((e: any) => ({ name: e.name, attributes: jsonKvs(e.attributes) })),
          status: { code: s.status?.code ?? 0, message: s.status?.message ?? "" },
          resource,
        });
      }
    }
  }
  return out;
}
