/**
 * The bridge between the daemon's Node HTTP route (an IncomingMessage whose body the daemon has
 * already read, and its ServerResponse) and the MCP SDK's fetch-shaped handlers (a web `Request`
 * in, a web `Response` out).
 */
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";

/** Headers that describe the Node connection or the body's framing, not the message: not copied. */
const HOP_BY_HOP = new Set([
  "host",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "upgrade",
  "expect",
]);

/**
 * A web `Request` for a POST whose body was already read. `signal` aborts when the caller goes
 * away (the SDK tears a streaming exchange down on it).
 */
export function toWebRequest(path: string, headers: IncomingHttpHeaders, body: Buffer, signal: AbortSignal): Request {
  const h = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) h.append(name, v);
  }
  return new Request(new URL(path, "http://daemon.invalid"), {
    method: "POST",
    headers: h,
    body: new Uint8Array(body),
    signal,
  });
}

/** Writes a web `Response` to `res`, streaming its body (an SSE answer) until it ends or the caller leaves. */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), res);
  } catch {
    // The caller went away mid-stream (or the stream failed after the head was sent): nothing
    // more can be said on this response; pipeline has destroyed both ends.
  }
}
