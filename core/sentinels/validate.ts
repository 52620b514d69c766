/**
 * Validation of a SentinelSpec against what is loaded: the spec schema, the provider (given or
 * defaulted), the target kind and the target plugin's own `inputSchema`.
 */
import { SvcError } from "../errors.js";
import type { SentinelView } from "../plugin-api/context.js";
import type { SentinelPlugins } from "./plugin-access.js";
import { parseOrThrow, sentinelSpecSchema, type MatchClause } from "./spec-schema.js";

/** The provider of a spec that names none: `local-gh` when every subject is a `github:` subject, else `agentpush`. */
export function defaultProvider(match: ReadonlyArray<Pick<MatchClause, "subject">>): string {
  return match.length > 0 && match.every((c) => c.subject.startsWith("github:")) ? "local-gh" : "agentpush";
}

export interface ValidatedSpec {
  /** The spec with `provider` resolved; `target` is still the creation input. */
  spec: SentinelView["spec"] & { provider: string };
  /** The target input as the target plugin's schema parsed it. */
  target: Record<string, unknown>;
}

export async function validateSpec(input: unknown, plugins: SentinelPlugins, now: number): Promise<ValidatedSpec> {
  const parsed = parseOrThrow(sentinelSpecSchema, input, "sentinel spec");
  const provider = parsed.provider ?? defaultProvider(parsed.match);
  const providers = plugins.providerKinds();
  if (!providers.includes(provider)) {
    const failed = plugins.failure?.("provider", provider);
    if (failed) throw new SvcError("plugin_load_failed", failed);
    const message = `unknown provider "${provider}"${parsed.provider ? "" : " (the default for these subjects)"}; loaded providers: ${providers.join(", ") || "(none)"}`;
    throw new SvcError("invalid_input", `invalid sentinel spec: provider: ${message}`, {
      details: [{ path: "provider", message }],
    });
  }
  const match = await normalizeSubjects(parsed.match, provider, plugins);
  if (parsed.until.kind === "at" && parsed.until.ms <= now) {
    const message = `is in the past (${new Date(parsed.until.ms).toISOString()}); give a future time in epoch ms`;
    throw new SvcError("invalid_input", `invalid sentinel spec: until.ms ${message}`, {
      details: [{ path: "until.ms", message }],
    });
  }
  const kind = parsed.target.kind;
  const targets = plugins.targetKinds();
  if (!targets.includes(kind)) {
    const failed = plugins.failure?.("target", kind);
    if (failed) throw new SvcError("plugin_load_failed", failed);
    const message = `unknown target kind "${kind}"; loaded target kinds: ${targets.join(", ") || "(none)"}`;
    throw new SvcError("invalid_input", `invalid sentinel spec: target.kind: ${message}`, {
      details: [{ path: "target.kind", message }],
    });
  }
  const target = await plugins.target(kind);
  const targetInput = parseOrThrow(target.inputSchema, parsed.target, `${kind} target`, "target") as Record<
    string,
    unknown
  >;
  return { spec: { ...parsed, match, provider }, target: targetInput };
}

/** Each clause subject as its provider's `resolveSubject` normalizes it (e.g. GitHub owner and repo lower-cased). */
export async function normalizeSubjects(
  match: MatchClause[],
  provider: string,
  plugins: SentinelPlugins,
): Promise<MatchClause[]> {
  const instance = await plugins.provider(provider);
  if (!instance.resolveSubject) return match;
  return match.map((clause, i) => {
    try {
      return { ...clause, subject: instance.resolveSubject!({ subject: clause.subject }) };
    } catch (err) {
      const message = `provider ${provider} does not accept this subject: ${(err as Error).message}`;
      throw new SvcError("invalid_input", `invalid sentinel spec: match[${i}].subject: ${message}`, {
        details: [{ path: `match[${i}].subject`, message }],
      });
    }
  });
}
