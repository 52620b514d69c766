import type { SentinelRecord } from "./service.js";

export type EndReason = NonNullable<SentinelRecord["endedReason"]>;

/** Where an expiry was noticed (carried in the `ended:expired` log line and the daemon event). */
export type ExpiryPoint = "startup" | "tick" | "poll" | "ingress" | "dispatch" | "terminal";

/**
 * Whether `rec` has reached its `until` at `now` given `delivered` deliveries. `subject_terminal`
 * is event-driven and never expires by time.
 */
export function expiryReason(rec: Pick<SentinelRecord, "spec">, now: number, delivered: number): EndReason | undefined {
  const until = rec.spec.until;
  if (until.kind === "at" && now >= until.ms) return "at";
  if (until.kind === "count" && delivered >= until.n) return "count";
  return undefined;
}

/** Whether one of `subjects` is a clause subject of `rec` (prefix clauses compare without the `*`). */
export function endsOn(rec: Pick<SentinelRecord, "spec">, subjects: string[]): boolean {
  if (rec.spec.until.kind !== "subject_terminal") return false;
  return rec.spec.match.some((c) => subjects.includes(c.subject.endsWith("*") ? c.subject.slice(0, -1) : c.subject));
}
