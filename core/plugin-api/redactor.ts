/** The `redactor` plugin kind: a pure function over text leaving the daemon (docs/redaction.md). */

/** Where the text is going: a trace attribute (OTLP export) or a request to the steward's judge. */
export type RedactionSurface = "trace" | "judge";

/** What a redactor is told about the text it redacts. */
export interface RedactorContext {
  /** The attribute or field name it travels under (`gen_ai.input.messages`, `transcript`). */
  readonly key: string;
  /** `true` for message content (prompts, replies, tool arguments and results); `false` for metadata (ids, model names, counts). */
  readonly content: boolean;
  readonly surface: RedactionSurface;
  readonly sessionId?: string;
}

export interface RedactorPlugin {
  readonly type: "redactor";
  readonly kind: string;
  readonly description?: string;
  /**
   * The text as it may leave. Pure and synchronous: no I/O, no state between calls. It must
   * return a string; one that throws or returns anything else fails closed (the text is dropped).
   * The host's `secrets` floor runs after it on every result, so svc's own secrets never leave
   * whatever it returns.
   */
  redact(text: string, ctx: RedactorContext): string;
}

/** Declares a redactor plugin. Default-export the result from the manifest's `entry`. */
export function defineRedactor(def: Omit<RedactorPlugin, "type">): RedactorPlugin {
  return Object.freeze({ ...def, type: "redactor" as const });
}
