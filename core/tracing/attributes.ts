/**
 * Span attributes through the session's redaction: every string value (and every string of an
 * array) is applied with its key and whether it is message content; a value the redaction drops
 * is omitted (the span is still exported). Numbers and booleans carry no text and pass as they are.
 */
import type { Attributes } from "@opentelemetry/api";
import type { Redaction } from "../redaction/redaction.js";

export type AttributeValue = string | number | boolean | readonly string[] | undefined;

export class RedactedAttributes {
  constructor(
    private readonly redaction: Redaction,
    private readonly sessionId: string | undefined,
  ) {}

  /** Metadata: ids, model names, stop reasons, counts. */
  meta(entries: Record<string, AttributeValue>): Attributes {
    return this.build(entries, false);
  }

  /** Message content: prompts, replies, tool arguments and results. */
  content(entries: Record<string, AttributeValue>): Attributes {
    return this.build(entries, true);
  }

  /** One string through the redaction (`undefined`: it must not leave). */
  text(key: string, text: string, content: boolean): string | undefined {
    return this.redaction.apply({
      text,
      key,
      content,
      surface: "trace",
      ...(this.sessionId ? { sessionId: this.sessionId } : {}),
    });
  }

  private build(entries: Record<string, AttributeValue>, content: boolean): Attributes {
    const out: Attributes = {};
    for (const [key, value] of Object.entries(entries)) {
      if (value === undefined) continue;
      if (typeof value === "number" || typeof value === "boolean") out[key] = value;
      else if (typeof value === "string") {
        const kept = this.text(key, value, content);
        if (kept !== undefined) out[key] = kept;
      } else {
        const kept = value.map((v) => this.text(key, v, content)).filter((v): v is string => v !== undefined);
        if (kept.length === value.length) out[key] = kept;
      }
    }
    return out;
  }
}

/** GenAI message JSON (`gen_ai.input.messages` / `gen_ai.output.messages`): one message with one text part. */
export function textMessages(role: "user" | "assistant", text: string, finishReason?: string): string {
  return JSON.stringify([
    { role, parts: [{ type: "text", content: text }], ...(finishReason ? { finish_reason: finishReason } : {}) },
  ]);
}

/** A JSON value as attribute text (tool arguments and results); strings as they are. */
export function jsonText(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
