/**
 * The daemon's real redaction service (core/redaction) for in-process tests, with the held secrets
 * given and no plugin redactors; `recorded` wraps a redaction to remember what it was handed.
 */
import { DaemonRedactionService } from "../../core/redaction/service.js";
import type { Redaction, RedactionInput } from "../../core/redaction/redaction.js";
import { SvcError } from "../../core/errors.js";
import { createMemoryLogger } from "../../core/runtime/logger.js";

export function redactionFor(slug: string | undefined, held: string[] = []): Promise<Redaction> {
  return new DaemonRedactionService({
    held: async () => ({ values: held, failed: [] }),
    paths: { home: "/home/tester", svcHome: "/home/tester/.svc" },
    plugin: async (s) => {
      throw new SvcError("not_found", `no redactor "${s}" in this test`);
    },
    logger: createMemoryLogger(),
  }).forSlug(slug);
}

export function recorded(r: Redaction): Redaction & { seen: RedactionInput[] } {
  const seen: RedactionInput[] = [];
  return { slug: r.slug, carriesContent: r.carriesContent, seen, apply: (i) => (seen.push(i), r.apply(i)) };
}
