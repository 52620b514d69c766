/** Every duration flag of the CLI: its range, its bare-number meaning, and one way of saying it. */
import { describe, expect, it } from "vitest";
import { parseDurationFlag, readDuration } from "../../../core/cli/duration.js";
import * as flags from "../../../core/cli/duration-flags.js";
import { MAX_TTL_MS } from "../../../core/remote/pairing/offer-request.js";

const S = 1_000;
const H = 3_600_000;
const D = 24 * H;
const DURATION_FLAGS = Object.values(flags).filter(
  (v): v is flags.DurationFlag => typeof v === "object" && v !== null && "bare" in v,
);

describe("the CLI's duration flags", () => {
  it("are all listed here, with bounds and examples in the grammar, each example within its range", () => {
    expect(DURATION_FLAGS.length).toBe(5);
    for (const f of DURATION_FLAGS) {
      for (const b of [f.min, ...(f.max === undefined ? [] : [f.max])])
        expect(readDuration(b, f.bare)).toHaveProperty("ms");
      for (const e of f.examples) expect(() => parseDurationFlag(e, f), `${f.flag} ${e}`).not.toThrow();
    }
  });

  it("--ttl: 1s to 24h (the daemon's own limit), a bare number is seconds; 1d and 30s now read", () => {
    expect(parseDurationFlag(flags.TTL_FLAG.max!, flags.TTL_FLAG)).toBe(MAX_TTL_MS);
    expect(parseDurationFlag("1d", flags.TTL_FLAG)).toBe(D);
    expect(parseDurationFlag("30s", flags.TTL_FLAG)).toBe(30 * S);
    expect(parseDurationFlag("1.5h", flags.TTL_FLAG)).toBe(1.5 * H);
    expect(parseDurationFlag("45", flags.TTL_FLAG)).toBe(45 * S);
    for (const bad of ["soon", "0s", "25h", "1w", "-1m", ""])
      expect(() => parseDurationFlag(bad, flags.TTL_FLAG)).toThrow(
        /^--ttl ".*" is invalid: .*; allowed: a duration from 1s to 24h/,
      );
  });

  it("--older-than: 0 or more, a bare number is days; 30s and 1w now read", () => {
    expect(parseDurationFlag("30s", flags.OLDER_THAN_FLAG)).toBe(30 * S);
    expect(parseDurationFlag("1w", flags.OLDER_THAN_FLAG)).toBe(7 * D);
    expect(parseDurationFlag("7", flags.OLDER_THAN_FLAG)).toBe(7 * D);
    expect(parseDurationFlag("0m", flags.OLDER_THAN_FLAG)).toBe(0);
  });

  it("--timeout: a bare number is seconds (0.2 as before); each verb keeps its floor", () => {
    expect(parseDurationFlag("0.2", flags.STOP_TIMEOUT_FLAG)).toBe(200);
    expect(parseDurationFlag("0", flags.STOP_TIMEOUT_FLAG)).toBe(0);
    expect(() => parseDurationFlag("0", flags.START_TIMEOUT_FLAG)).toThrow(/shorter than 1ms/);
    expect(parseDurationFlag("2m", flags.START_TIMEOUT_FLAG)).toBe(120 * S);
    expect(parseDurationFlag("600", flags.RUN_TIMEOUT_FLAG)).toBe(600 * S);
    expect(() => parseDurationFlag("1y", flags.RUN_TIMEOUT_FLAG)).toThrow(/longer than 24d/);
  });

  it("their help states the same grammar", () => {
    const grammar = `: ${flags.DURATION_GRAMMAR}; a bare number is `;
    for (const f of DURATION_FLAGS) expect(flags.durationHelp("lead", f)).toContain(grammar);
    expect(flags.timeHelp("lead", flags.SINCE_FLAG)).toContain(`: ${flags.DURATION_GRAMMAR}; an ISO-8601`);
  });
});
