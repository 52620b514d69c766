/**
 * A predicate over one provider's events with the engine's own matching rules, for consumers that
 * watch events without a sentinel (the MCP events poll buffers): the clauses are validated and
 * their subjects normalized as a sentinel's are, and a clause without `types` takes the provider's
 * `defaultTypes(subject)`, so a poll sees exactly what a sentinel with the same clauses would.
 */
import { SvcError } from "../errors.js";
import { subjectMatches, typeMatcher } from "./matcher.js";
import type { SentinelPlugins } from "./plugin-access.js";
import type { EventFilter } from "./service.js";
import { parseOrThrow, sentinelSpecSchema } from "./spec-schema.js";
import { normalizeSubjects } from "./validate.js";

/** Throws `invalid_input` for clauses a sentinel spec would refuse or a provider that is not loaded. */
export async function compileEventFilter(
  plugins: SentinelPlugins,
  provider: string,
  match: unknown,
): Promise<EventFilter> {
  const clauses = parseOrThrow(sentinelSpecSchema.shape.match, match, "match clauses");
  if (!plugins.providerKinds().includes(provider)) {
    throw new SvcError(
      "invalid_input",
      `unknown provider "${provider}"; loaded providers: ${plugins.providerKinds().join(", ") || "(none)"}`,
    );
  }
  const instance = await plugins.provider(provider);
  const compiled = (await normalizeSubjects(clauses, provider, plugins)).map((c) => ({
    subject: c.subject,
    test: typeMatcher(c.types ?? instance.defaultTypes(c.subject)),
  }));
  return (event) =>
    compiled.some((c) => c.test(event.type) && event.subjects.some((s) => subjectMatches(c.subject, s)));
}
