import type { SentinelView, SvcEvent } from "../../core/plugin-api/index.js";

const MAX_DATA_CHARS = 8000;

/** The prompt an agent receives for a matched event: one header line, then the event data as JSON. */
export function eventPrompt(sentinel: SentinelView, event: SvcEvent): string {
  const subject = event.subjects.at(-1) ?? "(no subject)";
  const label = sentinel.spec.label ? ` "${sentinel.spec.label}"` : "";
  const header = `[svc sentinel ${sentinel.id}${label}] ${event.type} on ${subject} (event ${event.id}${event.time ? `, ${event.time}` : ""})`;
  if (event.data === undefined) return header;
  let data = JSON.stringify(event.data, null, 2);
  if (data.length > MAX_DATA_CHARS)
    data = data.slice(0, MAX_DATA_CHARS) + `\n… (${data.length - MAX_DATA_CHARS} more characters)`;
  return `${header}\n${data}`;
}
