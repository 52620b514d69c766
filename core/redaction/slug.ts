/** Which redactor each surface uses (docs/redaction.md). */

interface RedactorConfig {
  defaults?: { traceRedactor?: string | undefined };
}

/** Traces: `defaults.traceRedactor`, else the default (`metadata`: no content). */
export function traceRedactorSlug(config: RedactorConfig): string | undefined {
  return config.defaults?.traceRedactor;
}

/** The judge: `defaults.traceRedactor` when set, else `secrets` (a judge needs the transcript to judge it). */
export function judgeRedactorSlug(config: RedactorConfig): string {
  return config.defaults?.traceRedactor ?? "secrets";
}
