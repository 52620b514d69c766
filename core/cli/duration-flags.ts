/**
 * Every CLI flag that takes a duration or a point in time, and the words that describe them (issue
 * 43: one grammar). Each flag keeps its own range and what a bare number means; the grammar is the
 * same for all of them, parsed by ./duration.ts. This module imports nothing, so the verb groups can
 * build their `--help` from it without loading the parser.
 */

/** What a bare number (no unit) means for a flag. */
export type BareUnit = "ms" | "s" | "m" | "h" | "d";

/** A flag whose value is a length of time. `min` and `max` are inclusive, written in the grammar. */
export interface DurationFlag {
  flag: string;
  bare: BareUnit;
  min: string;
  max?: string;
  examples: readonly string[];
}

/** A flag whose value is a point in time: a duration back from now, an ISO-8601 time, or epoch ms. */
export interface TimeFlag {
  flag: string;
  examples: readonly string[];
}

/** The grammar in words, the same in every flag's help and error. */
export const DURATION_GRAMMAR = "a number and a unit (ms, s, m, h, d, w or y; spelled out too, as in 2 hours)";

const BARE_WORDS: Record<BareUnit, string> = {
  ms: "milliseconds",
  s: "seconds",
  m: "minutes",
  h: "hours",
  d: "days",
};

/** What a duration flag accepts, as its help and its errors say it. */
export function allowedDuration(f: DurationFlag): string {
  const range = f.max === undefined ? `of ${f.min} or more` : `from ${f.min} to ${f.max}`;
  return `a duration ${range}, e.g. ${f.examples.join(", ")}: ${DURATION_GRAMMAR}; a bare number is ${BARE_WORDS[f.bare]}`;
}

/** What a point-in-time flag accepts, as its help and its errors say it. */
export function allowedTime(f: TimeFlag): string {
  return `a duration back from now, e.g. ${f.examples.join(", ")}: ${DURATION_GRAMMAR}; an ISO-8601 date or time (2026-11-27, 2026-11-27T09:00Z; local time without a zone); or epoch ms`;
}

/** `--help` text: what the flag is for, then what it accepts. */
export function durationHelp(lead: string, f: DurationFlag): string {
  return `${lead}: ${allowedDuration(f)}`;
}

export function timeHelp(lead: string, f: TimeFlag): string {
  return `${lead}: ${allowedTime(f)}`;
}

/** `svc pair offer --ttl`: the daemon takes 1 s to 24 h (core/remote/pairing/offer-request.ts). */
export const TTL_FLAG: DurationFlag = {
  flag: "--ttl",
  bare: "s",
  min: "1s",
  max: "24h",
  examples: ["90s", "10m", "2h"],
};

/** `svc worktree gc --older-than`. */
export const OLDER_THAN_FLAG: DurationFlag = {
  flag: "--older-than",
  bare: "d",
  min: "0",
  examples: ["30m", "12h", "7d", "2w"],
};

/** `svc stop --timeout`: 0 sends SIGTERM and checks once. */
export const STOP_TIMEOUT_FLAG: DurationFlag = {
  flag: "--timeout",
  bare: "s",
  min: "0",
  examples: ["30s", "2m"],
};

/** `svc start --timeout`, `svc serve --detach --timeout`. */
export const START_TIMEOUT_FLAG: DurationFlag = {
  flag: "--timeout",
  bare: "s",
  min: "1ms",
  examples: ["60s", "5m"],
};

/** `svc sessions run --timeout`: a client-side timer (Node's timers hold at most ~24.8 days). */
export const RUN_TIMEOUT_FLAG: DurationFlag = {
  flag: "--timeout",
  bare: "s",
  min: "1s",
  max: "24d",
  examples: ["600s", "30m", "2h"],
};

/** `svc logs --since`, `svc sentinel replay --since`, `svc sessions follow --since`. */
export const SINCE_FLAG: TimeFlag = { flag: "--since", examples: ["30s", "10m", "2h", "1d", "1w"] };
