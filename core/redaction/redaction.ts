/**
 * The redaction contract (core/redaction): what leaves the daemon toward a third party (trace
 * attributes sent to an OTLP endpoint, requests sent to the steward's judge) passes through one
 * {@link Redaction} first.
 *
 * A redaction is the configured redactor (`defaults.traceRedactor`: a built-in `secrets`, `paths`,
 * `metadata`, or a `redactor` plugin from a package) followed, always, by the `secrets` floor (known
 * key and token shapes, and every secret svc itself holds), so no redactor can let svc's own
 * secrets out. It never throws: a redactor that throws, or an unknown slug, fails closed (the
 * content is dropped and `apply` returns `undefined`).
 */
import { token } from "../tokens.js";

/** Where the text is going. */
export type { RedactionSurface } from "../plugin-api/redactor.js";
import type { RedactionSurface } from "../plugin-api/redactor.js";

export interface RedactionInput {
  /** The text to redact. */
  readonly text: string;
  /** The attribute or field name it travels under (`gen_ai.input.messages`, `transcript`). */
  readonly key: string;
  /**
   * `true` for message content (prompts, replies, tool arguments and results, transcript text);
   * `false` for metadata (ids, model names, stop reasons, counts). The `metadata` redactor drops
   * all content and keeps metadata.
   */
  readonly content: boolean;
  readonly surface: RedactionSurface;
  readonly sessionId?: string;
}

export interface Redaction {
  /** The configured redactor's slug (`metadata` when none is configured). */
  readonly slug: string;
  /** False when every content input is dropped (the `metadata` redactor, or one that failed to load). */
  readonly carriesContent: boolean;
  /** The redacted text, or `undefined` when it must not leave (dropped, or the redactor threw). Never throws. */
  apply(input: RedactionInput): string | undefined;
}

export interface RedactionService {
  /**
   * The redaction for a redactor slug (`undefined`: the default, `metadata`). A plugin redactor is
   * looked up (and its package loaded) at each call, so one installed while the daemon runs is
   * used; resolve once per session or per judge request, then `apply` synchronously. Never rejects:
   * an unknown slug or a package that fails to load gives a redaction that drops all content.
   */
  forSlug(slug: string | undefined): Promise<Redaction>;
}

/** The daemon's redaction service (core/redaction). */
export const REDACTION = token<RedactionService>("redaction");
