/**
 * How the dashboard page reaches its daemon. Two implementations: on loopback, same-origin
 * `fetch` with the login cookie and an `EventSource` on `/events`; through a pairing, the
 * encrypted channel (requests, and the event stream carried over the link). The page never
 * holds a bearer token.
 */

/** What the caller may do, as the daemon decided (owner: everything; operate: start, prompt and stop sessions; read: look). */
export type DashboardScope = "owner" | "operate" | "read";

export interface DashboardResponse {
  status: number;
  body: string;
}

/**
 * One entry of the daemon's event stream (`GET /events`: SSE `event:` type and JSON `data:`).
 * `data` is the event's own data (e.g. `{sessionId, promptId, …}` for `session:turn-ended`); a
 * transport may also hand over the whole SSE payload `{seq, at, type, data}`, which the page unwraps.
 */
export interface DashboardEvent {
  type: string;
  data: unknown;
}

export interface DashboardTransport {
  /** Where the page is connected, for its header (e.g. "this machine, 127.0.0.1:7878" or "daemon ab12… through relay.example"). */
  readonly label: string;
  readonly scope: DashboardScope;
  /** A REST call to the daemon; `path` starts with `/` and names a daemon route (e.g. `/sessions`). */
  request(method: string, path: string, body?: unknown): Promise<DashboardResponse>;
  /** Follows the event stream until the returned function is called; reconnects on its own. */
  subscribe(onEvent: (e: DashboardEvent) => void): () => void;
}
