/**
 * One POST over undici's dispatch API, bounded in time and in response size: the response's
 * status and headers come back with its body clamped to `limit` bytes (past it the rest is
 * discarded and the connection dropped). Cheaper per request than `Dispatcher.request` (no
 * Readable body stream, no AbortSignal and listener per request), which matters to a dispatcher
 * posting to the same callbacks thousands of times a second.
 */
import type { Dispatcher } from "undici";

export interface ExchangeRequest {
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  /** Bounds the whole exchange; when it passes, the request is aborted and `timedOut()` thrown. */
  timeoutMs: number;
  timedOut: () => Error;
  /** Response bytes kept at most. */
  limit: number;
  /** Sees the final status and headers first: throwing ends the exchange with that error. */
  check?: (status: number, headers: Record<string, string>) => void;
}

export interface ExchangeResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  /** True when the response body was longer than the limit. */
  truncated: boolean;
}

export function exchange(dispatcher: Dispatcher, req: ExchangeRequest): Promise<ExchangeResponse> {
  return new Promise<ExchangeResponse>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    /** Why this side ended the exchange; applied as soon as undici hands over its controller. */
    let ended: Error | undefined;
    let settled = false;
    let status = 0;
    let headers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    let size = 0;

    const settle = (err: Error | undefined, truncated = false): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) reject(err);
      else
        resolve({ status, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), truncated });
    };
    /** Ends the exchange from this side: the caller gets `err` (or the clamped response) now. */
    const end = (err: Error | undefined, truncated = false): void => {
      ended ??= err ?? new Error("the response body passed the limit");
      settle(err, truncated);
      controller?.abort(ended);
    };
    const timer = setTimeout(() => end(req.timedOut()), req.timeoutMs);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (ended) c.abort(ended);
      },
      onResponseStart(_c, statusCode, raw) {
        if (statusCode < 200) return; // 1xx: informational, the final response follows
        status = statusCode;
        headers = flattenHeaders(raw);
        try {
          req.check?.(status, headers);
        } catch (err) {
          end(err as Error);
        }
      },
      onResponseData(_c, chunk) {
        if (settled) return;
        const room = req.limit - size;
        if (chunk.length > room) {
          if (room > 0) chunks.push(Buffer.from(chunk.subarray(0, room)));
          size = req.limit;
          end(undefined, true);
          return;
        }
        chunks.push(Buffer.from(chunk));
        size += chunk.length;
      },
      onResponseEnd() {
        settle(undefined);
      },
      onResponseError(_c, err) {
        settle(ended ?? err);
      },
    };
    try {
      dispatcher.dispatch(
        {
          origin: req.origin,
          path: req.path,
          method: "POST",
          headers: req.headers,
          body: req.body,
          headersTimeout: req.timeoutMs,
          bodyTimeout: req.timeoutMs,
        },
        handler,
      );
    } catch (err) {
      settle(err as Error);
    }
  });
}

function flattenHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in raw) {
    const v = raw[k];
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}
