/**
 * Serves a request that arrived through a pairing or the tunnel by sending it to the daemon's
 * own listener, marked as forwarded (`Forwarded`, `X-Forwarded-For`): it goes through the same
 * routes and the same authorization as any request, and is never taken for a loopback caller.
 * A stream request (`GET /events` through a pairing's link) whose answer is an event stream is
 * relayed event by event until the sink's signal ends it (the caller cancelled, the link closed,
 * or it fell behind); aborting the fetch closes the daemon's stream at once.
 */
import { REMOTE_MARKER, remoteMarker } from "../daemon/remote-marker.js";
import { remotePrincipal, type RemoteVia } from "../daemon/principal.js";
import type { RemoteRequest, RemoteResponse, StreamSink } from "./web/channel.js";
import { sseEvents } from "./sse-events.js";

/** Request headers a remote caller may set; everything else (Host, Forwarded, …) is ours. */
const PASSED = new Set(["authorization", "content-type", "accept", "last-event-id"]);

export interface ForwardTarget {
  port: number;
  bind: string;
  forwardKey: string;
}

export type Forward = (r: RemoteRequest, stream?: StreamSink) => Promise<RemoteResponse & { contentType?: string }>;

/** `via` is asked at each request: a pairing's scope may change while its link stays up. */
export function makeForwarder(target: () => ForwardTarget, via: () => RemoteVia): Forward {
  return async (r: RemoteRequest, stream?: StreamSink): Promise<RemoteResponse & { contentType?: string }> => {
    if (!/^(GET|POST|PUT|PATCH|DELETE)$/.test(r.method) || !r.path.startsWith("/") || r.path.startsWith("//")) {
      return {
        status: 400,
        body: JSON.stringify({
          error: { code: "invalid_input", message: `cannot forward ${r.method} ${r.path.slice(0, 80)}` },
        }),
      };
    }
    const { port, bind, forwardKey } = target();
    const caller = via();
    const name = remotePrincipal(caller).slice("remote:".length).replaceAll(":", "-");
    const host = bind === "0.0.0.0" ? "127.0.0.1" : bind === "::" ? "::1" : bind;
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(r.headers ?? {})) if (PASSED.has(k.toLowerCase())) headers[k.toLowerCase()] = v;
    headers["forwarded"] = `for="${name}"`;
    headers["x-forwarded-for"] = name;
    headers[REMOTE_MARKER] = remoteMarker(forwardKey, caller);
    const res = await fetch(`http://${host.includes(":") ? `[${host}]` : host}:${port}${r.path}`, {
      method: r.method,
      headers,
      body: r.method === "GET" || r.method === "DELETE" || r.body === undefined ? undefined : r.body,
      // The caller bounds the wait (the CLI's own timeout rides with the request); a stream lasts until its sink ends it.
      signal: stream?.signal ?? AbortSignal.timeout(3_600_000),
    });
    const contentType = res.headers.get("content-type") ?? undefined;
    if (stream && res.ok && res.body && contentType?.startsWith("text/event-stream")) {
      stream.open();
      try {
        for await (const e of sseEvents(res.body)) stream.event(e);
      } catch (err) {
        // Aborted by the sink (its reason is the stream's end), or the daemon's stream broke off.
        if (!stream.signal.aborted) throw err;
      }
      return { status: res.status, body: "", contentType };
    }
    return { status: res.status, body: await res.text(), contentType };
  };
}
