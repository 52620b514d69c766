/**
 * The one duration grammar of the CLI (issue 43), read by the `ms` package: `500ms`, `90s`, `10m`,
 * `1.5h`, `1d`, `1w`, `1y`, `2 hours`. A bare number takes the flag's own unit; a point-in-time
 * flag also reads ISO-8601 and epoch ms. Errors name the flag, the text and what is allowed.
 */
import ms from "ms";
import { SvcError } from "../errors.js";
import { type BareUnit, type DurationFlag, type TimeFlag, allowedDuration, allowedTime } from "./duration-flags.js";

const BARE_MS: Record<BareUnit, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const BARE = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
/** `1M` reads as a minute in `ms` (units are case-insensitive); a reader may well mean a month. */
const CAPITAL_M = /\d\s*M$/;
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?)?$/;

type Read = { ms: number } | { problem: string };

/** A duration in the grammar (a bare number in `bare`'s unit), in whole milliseconds, or why not. */
export function readDuration(text: string, bare: BareUnit): Read {
  const t = text.trim();
  if (t.startsWith("-")) return { problem: "a negative duration" };
  if (CAPITAL_M.test(t)) return { problem: "M could mean minutes or months: write m for minutes, or d or w" };
  const value = BARE.test(t) ? Number(t) * BARE_MS[bare] : t === "" ? undefined : ms(t as ms.StringValue);
  if (value === undefined || !Number.isFinite(value)) return { problem: "not a duration" };
  return { ms: Math.round(value) };
}

function flagError(flag: string, text: string, problem: string, allowed: string): SvcError {
  return new SvcError("usage", `${flag} ${JSON.stringify(text)} is invalid: ${problem}; allowed: ${allowed}`);
}

function bound(f: DurationFlag, text: string): number {
  const r = readDuration(text, f.bare);
  if (!("ms" in r)) throw new Error(`${f.flag}: its bound ${JSON.stringify(text)} is ${r.problem}`);
  return r.ms;
}

/** The flag's duration in milliseconds, within its range; a usage error otherwise. */
export function parseDurationFlag(text: string, f: DurationFlag): number {
  const r = readDuration(text, f.bare);
  if (!("ms" in r)) throw flagError(f.flag, text, r.problem, allowedDuration(f));
  if (r.ms < bound(f, f.min)) throw flagError(f.flag, text, `shorter than ${f.min}`, allowedDuration(f));
  if (f.max !== undefined && r.ms > bound(f, f.max))
    throw flagError(f.flag, text, `longer than ${f.max}`, allowedDuration(f));
  return r.ms;
}

/** An ISO-8601 date or time as epoch ms, or undefined: the shape first, then a real calendar day. */
function readIso(t: string): number | undefined {
  const m = ISO.exec(t);
  if (!m) return undefined;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate()) return undefined;
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : at;
}

/** The point in time (epoch ms) a `--since`-style flag names, counted back from `now` for a duration. */
export function parseTimeFlag(text: string, f: TimeFlag, now: number): number {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  if (BARE.test(t)) throw flagError(f.flag, text, "epoch ms is a whole number", allowedTime(f));
  const iso = readIso(t);
  if (iso !== undefined) return iso;
  const r = readDuration(t, "ms");
  if ("ms" in r) return now - r.ms;
  const problem = r.problem === "not a duration" ? "neither a duration nor an ISO-8601 time" : r.problem;
  throw flagError(f.flag, text, problem, allowedTime(f));
}
