/**
 * Reads a server-sent events body (the daemon's `GET /events`) into whole events, as the
 * EventSource parser does: `id:`, `event:` and `data:` fields (several `data:` lines joined by
 * newlines), comments and `retry:` skipped, an event dispatched at its blank line when it has data.
 * A line longer than `maxLineChars` ends the read with an error instead of growing without bound.
 */
import type { StreamEvent } from "./web/channel.js";

export async function* sseEvents(
  body: AsyncIterable<Uint8Array>,
  maxLineChars = 8 * 1024 * 1024,
): AsyncGenerator<StreamEvent> {
  const decoder = new TextDecoder();
  let buf = "";
  let id: string | undefined;
  let event = "";
  let data: string[] = [];
  for await (const chunk of body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (data.length)
          yield { ...(id !== undefined ? { id } : {}), event: event || "message", data: data.join("\n") };
        event = "";
        data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
      else if (field === "id" && !value.includes("\0")) id = value;
    }
    if (buf.length > maxLineChars) throw new Error(`an event-stream line ran over ${maxLineChars} characters`);
  }
}
