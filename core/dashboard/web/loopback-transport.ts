/**
 * The dashboard's transport on loopback: same-origin `fetch` (the session cookie goes along; no
 * token is ever in the page) and an `EventSource` on `/events`, which reconnects by itself.
 */
import type { DashboardEvent, DashboardResponse, DashboardScope, DashboardTransport } from "./transport.js";

interface EventSourceLike {
  addEventListener(type: string, fn: (e: { data: string }) => void): void;
  onmessage: ((e: { data: string }) => void) | null;
  close(): void;
}
const g = globalThis as unknown as {
  EventSource: new (url: string) => EventSourceLike;
  location: { host: string };
};

/** Event types the views follow (an EventSource only hands named events to listeners of that name). */
export const FOLLOWED_EVENTS = [
  "session:started",
  "session:turn-ended",
  "session:ended",
  "session:stalled",
  "session:resumed",
  "session:verdict",
  "session:prompt-stale",
  "sentinel:created",
  "sentinel:matched",
  "sentinel:ended",
  "sentinel:removed",
  "sentinel:delivery-suspended",
  "sentinel:delivery-resumed",
  "swarm:run-started",
  "swarm:step",
  "swarm:run-ended",
  "events:gap",
];

export function loopbackTransport(scope: DashboardScope): DashboardTransport {
  return {
    label: `this machine, ${g.location.host}`,
    scope,
    async request(method: string, path: string, body?: unknown): Promise<DashboardResponse> {
      const r = await fetch(path, {
        method,
        credentials: "same-origin",
        headers: body === undefined ? {} : { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, body: await r.text() };
    },
    subscribe(onEvent: (e: DashboardEvent) => void): () => void {
      const source = new g.EventSource("/events");
      const deliver = (type: string) => (e: { data: string }) => {
        try {
          const parsed = JSON.parse(e.data) as { data?: unknown };
          onEvent({ type, data: type === "events:gap" ? parsed : parsed.data });
        } catch {
          // a line that is not JSON is no event of ours
        }
      };
      for (const type of FOLLOWED_EVENTS) source.addEventListener(type, deliver(type));
      return () => source.close();
    },
  };
}
