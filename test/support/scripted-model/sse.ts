import type { ServerResponse } from "node:http";

/** Starts an SSE answer. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
}

/** One SSE event: `event:` line (when named) and a JSON `data:` line. */
export function sendEvent(res: ServerResponse, event: string | undefined, data: unknown): void {
  res.write(`${event ? `event: ${event}\n` : ""}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

let counter = 0;
/** A fresh id with a prefix, e.g. `toolu_scripted_3`. */
export const nextId = (prefix: string): string => `${prefix}_scripted_${++counter}`;
