/**
 * OpenAI streams carry usage only when the request asks (`stream_options.include_usage`); the
 * sidecar asks on the client's behalf so every call is counted, and this filter takes the extra
 * usage-only chunk (`choices: []`) back out for a client that did not ask. Events pass whole, as
 * soon as each is complete.
 */
import { StringDecoder } from "node:string_decoder";

const EVENT_END = /\r?\n\r?\n/g;

export class UsageChunkFilter {
  private readonly decoder = new StringDecoder("utf8");
  private buf = "";

  /** The complete events in `chunk` (with what came before it), minus the usage-only one. */
  filter(chunk: Buffer): string {
    this.buf += this.decoder.write(chunk);
    let out = "";
    let start = 0;
    EVENT_END.lastIndex = 0;
    for (let m = EVENT_END.exec(this.buf); m !== null; m = EVENT_END.exec(this.buf)) {
      const end = m.index + m[0].length;
      const event = this.buf.slice(start, end);
      if (!isUsageOnly(event)) out += event;
      start = end;
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  /** Whatever is left when the stream ends. */
  flush(): string {
    const rest = this.buf + this.decoder.end();
    this.buf = "";
    return rest;
  }
}

function isUsageOnly(event: string): boolean {
  if (!event.startsWith("data:") || !event.includes('"usage"') || !event.includes('"choices"')) return false;
  try {
    const data = JSON.parse(event.slice(5));
    return (
      Array.isArray(data?.choices) && data.choices.length === 0 && data.usage !== null && typeof data.usage === "object"
    );
  } catch {
    return false;
  }
}
