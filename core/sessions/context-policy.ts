/**
 * `defaults.contextContinuity`: which thresholds a session's context use crosses, and what acts.
 * Pure logic (no I/O); the session runtime applies the verdicts (context-continuity.ts).
 *
 * - Context use is a percent (0-100) of the model's context window: the input tokens of the
 *   session's latest model call over the window.
 * - A threshold fires when use is at or above it and it is armed; it is then disarmed until a
 *   report below it (after a compaction) from the model that crossed it arms it again: once per
 *   upward crossing. (A small side call on another model, which an agent may make between its
 *   main calls, does not re-arm it.)
 * - When one report crosses several thresholds, the most severe action acts (warn < compact <
 *   continueFresh < hardStop); the others are disarmed too and only noted.
 * - `mode`: `act` (default) does each action, `warn` turns every crossing into a warning that
 *   names what `act` would have done, `off` does nothing.
 */
import type { contextContinuitySchema } from "../config/schema.js";
import type { z } from "zod";

export const CONTEXT_ACTIONS = ["warn", "compact", "continueFresh", "hardStop"] as const;
/** In order of severity. */
export type ContextAction = (typeof CONTEXT_ACTIONS)[number];
export type ContextMode = "act" | "warn" | "off";

/** The config key of each action's threshold. */
export const THRESHOLD_KEYS: Readonly<Record<ContextAction, string>> = {
  warn: "warnAtPct",
  compact: "compactAtPct",
  continueFresh: "continueFreshAtPct",
  hardStop: "hardStopAtPct",
};

export interface Threshold {
  action: ContextAction;
  /** `defaults.contextContinuity.<key>`. */
  key: string;
  atPct: number;
}

export interface ContextPolicy {
  mode: ContextMode;
  thresholds: Threshold[];
}

/** The policy a config section sets: unset mode = `act`; only the configured thresholds. */
export function contextPolicy(section: z.infer<typeof contextContinuitySchema> | undefined): ContextPolicy {
  const mode = (section?.mode ?? "act") as ContextMode;
  const thresholds: Threshold[] = [];
  for (const action of CONTEXT_ACTIONS) {
    const key = THRESHOLD_KEYS[action];
    const atPct = (section as Record<string, unknown> | undefined)?.[key];
    if (typeof atPct === "number") thresholds.push({ action, key, atPct });
  }
  return { mode, thresholds };
}

/** Context use in percent of `window`, rounded to one decimal. */
export function contextPct(inputTokens: number, window: number): number {
  return Math.round((inputTokens / window) * 1000) / 10;
}

/** The thresholds fired and not re-armed, each with the model whose report crossed it. */
export type Fired = ReadonlyMap<ContextAction, string>;

export interface Crossings {
  fired: Map<ContextAction, string>;
  /** The thresholds this report crossed upward, least severe first. */
  crossed: Threshold[];
}

/** One report of `pct` by `model` against the thresholds, given those already fired (and not re-armed). */
export function cross(fired: Fired, pct: number, thresholds: readonly Threshold[], model: string): Crossings {
  const next = new Map<ContextAction, string>();
  const crossed: Threshold[] = [];
  for (const t of thresholds) {
    const by = fired.get(t.action);
    if (pct >= t.atPct) {
      next.set(t.action, by ?? model);
      if (by === undefined) crossed.push(t);
    } else if (by !== undefined && by !== model) {
      next.set(t.action, by);
    }
  }
  return { fired: next, crossed };
}

export interface Verdict {
  /** The crossing that acts (in mode `warn`: is warned about). */
  acting: Threshold;
  /** What happens: the acting threshold's action, or `warn` in mode `warn`. */
  does: ContextAction;
  /** In mode `warn`: what `act` would have done. */
  wouldHave?: ContextAction;
  /** The other thresholds this report crossed: disarmed, only noted. */
  noted: Threshold[];
}

/** What a report's crossings do under `mode`: undefined when nothing crossed or the mode is off. */
export function verdict(mode: ContextMode, crossed: readonly Threshold[]): Verdict | undefined {
  if (mode === "off" || crossed.length === 0) return undefined;
  const sorted = [...crossed].sort((a, b) => CONTEXT_ACTIONS.indexOf(a.action) - CONTEXT_ACTIONS.indexOf(b.action));
  const acting = sorted[sorted.length - 1]!;
  const noted = sorted.slice(0, -1);
  if (mode === "warn")
    return { acting, does: "warn", ...(acting.action !== "warn" ? { wouldHave: acting.action } : {}), noted };
  return { acting, does: acting.action, noted };
}
