/**
 * The daemon's {@link RedactionService}: a configured redactor (built-in or a `redactor` plugin)
 * followed, always, by the `secrets` floor. Fails closed: a redactor that cannot be found or
 * loaded, that throws, or that returns anything but a string drops the text; each such slug is
 * logged once (never the text).
 */
import type { RedactorPlugin } from "../plugin-api/redactor.js";
import type { Logger } from "../runtime/logger.js";
import {
  DEFAULT_REDACTOR,
  builtinRedactor,
  isBuiltinRedactor,
  secretsFloor,
  type PathNames,
  type RedactFn,
} from "./builtins.js";
import type { Redaction, RedactionInput, RedactionService } from "./redaction.js";

export interface RedactionDeps {
  /** The exact secret values svc holds now, and the sources that could not be read. */
  held(): Promise<{ values: string[]; failed: string[] }>;
  paths: PathNames;
  /** The `redactor` plugin of `slug`, its package loaded if need be; rejects with why there is none. */
  plugin(slug: string): Promise<RedactorPlugin>;
  logger: Logger;
}

export class DaemonRedactionService implements RedactionService {
  private readonly told = new Set<string>();

  constructor(private readonly d: RedactionDeps) {}

  async forSlug(slug: string | undefined): Promise<Redaction> {
    const name = slug ?? DEFAULT_REDACTOR;
    const held = await this.d.held().catch(() => ({ values: [], failed: ["held secrets"] }));
    if (held.failed.length > 0) {
      // Without every held secret the floor is not whole: nothing of the content may leave.
      this.once(
        `held:${held.failed.join(",")}`,
        `redaction: could not read the secrets held by ${held.failed.join(", ")}; content is dropped until they can be read`,
      );
      return this.build(name, builtinRedactor("metadata", this.d.paths), held.values, false);
    }
    if (isBuiltinRedactor(name)) return this.build(name, builtinRedactor(name, this.d.paths), held.values);
    let plugin: RedactorPlugin;
    try {
      plugin = await this.d.plugin(name);
    } catch (err) {
      this.once(name, `redaction: redactor "${name}" is unavailable, so content is dropped: ${(err as Error).message}`);
      return this.build(name, () => undefined, held.values, false);
    }
    return this.build(
      name,
      (input) =>
        plugin.redact(input.text, {
          key: input.key,
          content: input.content,
          surface: input.surface,
          ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
        }),
      held.values,
    );
  }

  private build(
    slug: string,
    redact: RedactFn,
    held: readonly string[],
    carriesContent = slug !== DEFAULT_REDACTOR,
  ): Redaction {
    const floor = secretsFloor(held);
    return {
      slug,
      carriesContent,
      apply: (input: RedactionInput) => {
        let out: unknown;
        try {
          out = redact(input);
        } catch (err) {
          this.once(
            slug,
            `redaction: redactor "${slug}" threw (${(err as Error)?.name ?? "error"}); the text is dropped`,
          );
          return undefined;
        }
        if (out === undefined) return undefined;
        if (typeof out !== "string") {
          this.once(
            slug,
            `redaction: redactor "${slug}" returned ${out === null ? "null" : typeof out}, not a string; the text is dropped`,
          );
          return undefined;
        }
        return floor(out);
      },
    };
  }

  /** Logs `message` the first time `key` fails. */
  private once(key: string, message: string): void {
    if (this.told.has(key)) return;
    this.told.add(key);
    this.d.logger.warn(message, { redactor: key });
  }
}
