import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  CONTEXT_ACTIONS,
  contextPct,
  contextPolicy,
  cross,
  verdict,
  type Fired,
  type Threshold,
} from "../../../core/sessions/context-policy.js";

const all = contextPolicy({ warnAtPct: 60, compactAtPct: 75, continueFreshAtPct: 85, hardStopAtPct: 95 });

/** Feeds `pcts` in order (each `[pct, model]` or a pct of model `main`); returns each report's crossings. */
function run(pcts: Array<number | [number, string]>, thresholds: Threshold[] = all.thresholds): Threshold[][] {
  let fired: Fired = new Map();
  return pcts.map((report) => {
    const [pct, model] = typeof report === "number" ? [report, "main"] : report;
    const r = cross(fired, pct, thresholds, model);
    fired = r.fired;
    return r.crossed;
  });
}

describe("contextContinuity policy", () => {
  it("reads the configured thresholds in order of severity; mode defaults to act", () => {
    expect(all).toEqual({
      mode: "act",
      thresholds: [
        { action: "warn", key: "warnAtPct", atPct: 60 },
        { action: "compact", key: "compactAtPct", atPct: 75 },
        { action: "continueFresh", key: "continueFreshAtPct", atPct: 85 },
        { action: "hardStop", key: "hardStopAtPct", atPct: 95 },
      ],
    });
    expect(contextPolicy(undefined)).toEqual({ mode: "act", thresholds: [] });
    expect(contextPolicy({ mode: "off", compactAtPct: 50 })).toEqual({
      mode: "off",
      thresholds: [{ action: "compact", key: "compactAtPct", atPct: 50 }],
    });
  });

  it("measures percent of the window, one decimal", () => {
    expect(contextPct(150_000, 200_000)).toBe(75);
    expect(contextPct(1, 3)).toBe(33.3);
  });

  it("fires a threshold once at or above it, and again only after use fell below it", () => {
    const keys = run([59.9, 60, 70, 61, 59, 60, 80]).map((c) => c.map((t) => t.key));
    expect(keys).toEqual([[], ["warnAtPct"], [], [], [], ["warnAtPct"], ["compactAtPct"]]);
  });

  it("a lower report from another model (a side call) does not re-arm; one from the crossing model does", () => {
    const keys = run([70, [2, "haiku"], 71, [59, "main"], [61, "haiku"]]).map((c) => c.map((t) => t.key));
    expect(keys).toEqual([["warnAtPct"], [], [], [], ["warnAtPct"]]);
  });

  it("a report crossing several thresholds: the most severe acts, the others are noted and disarmed", () => {
    const [first, second] = run([90, 96]);
    const v = verdict("act", first!);
    expect(v).toMatchObject({ does: "continueFresh", acting: { key: "continueFreshAtPct" } });
    expect(v!.noted.map((t) => t.key)).toEqual(["warnAtPct", "compactAtPct"]);
    expect(second!.map((t) => t.key)).toEqual(["hardStopAtPct"]);
  });

  it("mode warn only warns, naming what act would have done; mode off does nothing", () => {
    const crossed = run([99])[0]!;
    expect(verdict("warn", crossed)).toMatchObject({
      does: "warn",
      wouldHave: "hardStop",
      acting: { key: "hardStopAtPct" },
    });
    expect(verdict("warn", crossed.slice(0, 1))).toEqual({ acting: crossed[0], does: "warn", noted: [] });
    expect(verdict("off", crossed)).toBeUndefined();
    expect(verdict("act", [])).toBeUndefined();
  });

  it("for any sequence of usages from several models, a threshold fires again only after its crossing model fell below it", () => {
    const t: Threshold = { action: "compact", key: "compactAtPct", atPct: 50 };
    const reports = fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.constantFrom("main", "side")), {
      maxLength: 60,
    });
    fc.assert(
      fc.property(reports, (list) => {
        const fired = run(list, [t]).map((c) => c.length > 0);
        let armedBy: string | undefined; // the model that fired it, while it is disarmed
        list.forEach(([pct, model], i) => {
          const expected = pct >= t.atPct && armedBy === undefined;
          expect(fired[i]).toBe(expected);
          if (expected) armedBy = model;
          else if (pct < t.atPct && armedBy === model) armedBy = undefined;
        });
      }),
    );
  });

  it("for any sequence of usages, each threshold fires at most once per upward crossing", () => {
    const thresholdsArb = fc
      .uniqueArray(fc.constantFrom(...CONTEXT_ACTIONS), { minLength: 1 })
      .chain((actions) =>
        fc.tuple(
          ...actions.map((action) =>
            fc.integer({ min: 0, max: 100 }).map((atPct): Threshold => ({ action, key: `${action}AtPct`, atPct })),
          ),
        ),
      );
    fc.assert(
      fc.property(
        thresholdsArb,
        fc.array(fc.double({ min: 0, max: 120, noNaN: true }), { maxLength: 60 }),
        (thresholds, pcts) => {
          const fired = run(pcts, thresholds);
          for (const t of thresholds) {
            // The reference: count the reports at/above the threshold whose predecessor was below it (or absent).
            let expected = 0;
            let below = true;
            const firings: number[] = [];
            pcts.forEach((pct, i) => {
              if (pct >= t.atPct && below) {
                expected++;
                firings.push(i);
              }
              below = pct < t.atPct;
            });
            const actual = fired.flatMap((c, i) => (c.some((x) => x.action === t.action) ? [i] : []));
            expect(actual).toEqual(firings);
            expect(actual.length).toBe(expected);
          }
        },
      ),
    );
  });
});
