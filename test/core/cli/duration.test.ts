/** The CLI's one duration grammar (issue 43): what it reads, what it refuses, and how it says so. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseDurationFlag, parseTimeFlag, readDuration } from "../../../core/cli/duration.js";
import type { DurationFlag, TimeFlag } from "../../../core/cli/duration-flags.js";
import { SvcError } from "../../../core/errors.js";

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
const W = 7 * D;
const Y = 365.25 * D;
/** Every spelling of each unit `ms` reads (its units are case-insensitive). */
const UNITS: Array<[number, string[]]> = [
  [1, ["ms", "msec", "msecs", "millisecond", "milliseconds"]],
  [S, ["s", "sec", "secs", "second", "seconds"]],
  [M, ["m", "min", "mins", "minute", "minutes"]],
  [H, ["h", "hr", "hrs", "hour", "hours"]],
  [D, ["d", "day", "days"]],
  [W, ["w", "week", "weeks"]],
  [Y, ["y", "yr", "yrs", "year", "years"]],
];
const unit = fc
  .constantFrom(...UNITS.flatMap(([size, names]) => names.map((n) => [size, n] as const)))
  .chain(([size, n]) =>
    fc
      .constantFrom(n, n.toUpperCase(), n[0]!.toUpperCase() + n.slice(1))
      .filter((spelled) => spelled !== "M")
      .map((spelled) => [size, spelled] as const),
  );
const NOW = Date.UTC(2026, 10, 27, 9, 0, 0);
const ANY: DurationFlag = { flag: "--wait", bare: "s", min: "0", examples: ["90s", "10m"] };
const SINCE: TimeFlag = { flag: "--since", examples: ["10m", "1w"] };

function usageMessage(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (SvcError.is(err) && err.code === "usage") return err.message;
    throw err;
  }
  throw new Error("no error");
}

describe("the duration grammar", () => {
  it("reads a number and any spelling of a unit, with or without a space, in whole ms", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.constantFrom("", " "), unit, (n, space, [size, u]) => {
        expect(readDuration(`${n}${space}${u}`, "s")).toEqual({ ms: Math.round(n * size) });
      }),
    );
  });

  it("reads fractions (1.5h, .5d) and surrounding blanks", () => {
    expect(readDuration("1.5h", "s")).toEqual({ ms: 1.5 * H });
    expect(readDuration(".5d", "s")).toEqual({ ms: 12 * H });
    expect(readDuration("  2 hours ", "s")).toEqual({ ms: 2 * H });
    expect(readDuration("500ms", "s")).toEqual({ ms: 500 });
    expect(readDuration("1y", "s")).toEqual({ ms: Y });
  });

  it("takes a bare number in the flag's own unit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (n) => {
        expect(readDuration(String(n), "s")).toEqual({ ms: n * S });
        expect(readDuration(String(n), "d")).toEqual({ ms: n * D });
        expect(readDuration(String(n), "ms")).toEqual({ ms: n });
      }),
    );
    expect(readDuration("1.5", "d")).toEqual({ ms: 36 * H });
  });

  it("refuses negatives, a capital M (minutes or months?) and anything that is not number-then-unit", () => {
    expect(readDuration("-1h", "s")).toEqual({ problem: "a negative duration" });
    expect(readDuration("1M", "s")).toEqual({ problem: expect.stringContaining("M could mean minutes or months") });
    for (const bad of [
      "",
      " ",
      "soon",
      "7x",
      "h",
      "1h30m",
      "1 h m",
      "1e3",
      "1,5h",
      "0x10",
      "Infinity",
      "1mo",
      `${"1".repeat(101)}s`,
    ])
      expect(readDuration(bad, "s"), bad).toEqual({ problem: "not a duration" });
  });

  it("refuses every text outside the grammar, naming the flag, the text and what is allowed", () => {
    const grammar = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*$|^\s*(?:\d+)?\.?\d+ *[a-z]+\s*$/i;
    fc.assert(
      fc.property(
        fc.string().filter((t) => !grammar.test(t)),
        (text) => {
          const message = usageMessage(() => parseDurationFlag(text, ANY));
          expect(message.startsWith(`--wait ${JSON.stringify(text)} is invalid: `)).toBe(true);
          expect(message).toContain("; allowed: a duration of 0 or more, e.g. 90s, 10m: a number and a unit (");
          expect(message).toContain("a bare number is seconds");
        },
      ),
    );
  });

  it("keeps each flag's range: inclusive bounds, then 'shorter than' / 'longer than'", () => {
    const ttl: DurationFlag = { flag: "--ttl", bare: "s", min: "1s", max: "24h", examples: ["90s"] };
    fc.assert(
      fc.property(fc.integer({ min: S, max: D }), (v) => {
        expect(parseDurationFlag(`${v}ms`, ttl)).toBe(v);
      }),
    );
    expect(parseDurationFlag("1d", ttl)).toBe(D);
    expect(usageMessage(() => parseDurationFlag("999ms", ttl))).toMatch(
      /^--ttl "999ms" is invalid: shorter than 1s; allowed: a duration from 1s to 24h, e\.g\. 90s/,
    );
    expect(usageMessage(() => parseDurationFlag("25h", ttl))).toMatch(
      /^--ttl "25h" is invalid: longer than 24h; allowed:/,
    );
  });
});

describe("a point in time (--since)", () => {
  it("counts a duration back from the injected now", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000 }), unit, (n, [size, u]) => {
        expect(parseTimeFlag(`${n}${u}`, SINCE, NOW)).toBe(NOW - Math.round(n * size));
      }),
    );
    expect(parseTimeFlag("1w", SINCE, NOW)).toBe(NOW - W);
    expect(parseTimeFlag("30s", SINCE, NOW)).toBe(NOW - 30 * S);
  });

  it("reads ISO-8601 dates and times (round trip) and a bare whole number as epoch ms", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("1970-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (d) => {
          expect(parseTimeFlag(d.toISOString(), SINCE, NOW)).toBe(d.getTime());
          expect(parseTimeFlag(String(d.getTime()), SINCE, NOW)).toBe(d.getTime());
        },
      ),
    );
    expect(parseTimeFlag("2026-11-27", SINCE, NOW)).toBe(Date.UTC(2026, 10, 27));
    expect(parseTimeFlag("2026-11-27T09:00Z", SINCE, NOW)).toBe(NOW);
    expect(parseTimeFlag("2026-11-27T10:00+01:00", SINCE, NOW)).toBe(NOW);
    expect(parseTimeFlag("2026-11-27T09:00:00", SINCE, NOW)).toBe(new Date(2026, 10, 27, 9).getTime());
  });

  it("refuses what is neither, an impossible calendar day, a fraction of epoch ms and the future", () => {
    const allowed = "; allowed: a duration back from now, e.g. 10m, 1w: a number and a unit (";
    for (const [text, problem] of [
      ["yesterday", "neither a duration nor an ISO-8601 time"],
      ["2026-02-30", "neither a duration nor an ISO-8601 time"],
      ["2026-13-01T00:00Z", "neither a duration nor an ISO-8601 time"],
      ["foo 12", "neither a duration nor an ISO-8601 time"],
      ["1.5", "epoch ms is a whole number"],
      ["-1h", "a negative duration"],
    ]) {
      const message = usageMessage(() => parseTimeFlag(text!, SINCE, NOW));
      expect(message).toContain(`--since ${JSON.stringify(text)} is invalid: ${problem}${allowed}`);
      expect(message).toContain(
        "; an ISO-8601 date or time (2026-11-27, 2026-11-27T09:00Z; local time without a zone); or epoch ms",
      );
    }
  });
});
