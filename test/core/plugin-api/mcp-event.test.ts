import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { toEventOccurrence } from "../../../core/plugin-api/mcp-event.js";

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0);

describe("toEventOccurrence", () => {
  it("shows an svc event as the sketch's EventOccurrence under the subscribed name", () => {
    const occ = toEventOccurrence(
      "agentpush.event",
      {
        id: "evt_1",
        type: "ci.build.finished",
        subjects: ["ci:api", "ci:api#1"],
        time: "2026-11-26T10:00:00+01:00",
        data: { n: 1 },
      },
      NOW,
      "c1",
    );
    expect(occ).toEqual({
      eventId: "evt_1",
      name: "agentpush.event",
      timestamp: "2026-11-26T09:00:00.000Z",
      data: { type: "ci.build.finished", subjects: ["ci:api", "ci:api#1"], payload: { n: 1 } },
      cursor: "c1",
    });
  });

  it("always gives an ISO-8601 UTC timestamp: the event's time when it parses, else now", () => {
    fc.assert(
      fc.property(fc.option(fc.string(), { nil: undefined }), (time) => {
        const { timestamp } = toEventOccurrence(
          "n",
          { id: "e", type: "t", subjects: ["s"], ...(time === undefined ? {} : { time }) },
          NOW,
          null,
        );
        expect(timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
        const parsed = time === undefined ? NaN : Date.parse(time);
        expect(Date.parse(timestamp)).toBe(Number.isFinite(parsed) ? parsed : NOW);
      }),
    );
  });

  it("replaces a payload over the limit with a summary and marks the data truncated", () => {
    const big = { blob: "x".repeat(2_000) };
    const occ = toEventOccurrence("n", { id: "e", type: "t", subjects: ["a", "a#1"], data: big }, NOW, null, 1_000);
    expect(occ.data).toEqual({
      type: "t",
      subjects: ["a", "a#1"],
      payload: { summary: expect.stringMatching(/over the 1000-byte limit/), subject: "a#1" },
      truncated: true,
    });
    expect(occ.data.payload).toBe(occ.data.payload);
    expect(toEventOccurrence("n", { id: "e", type: "t", subjects: ["a"] }, NOW, null).data.payload).toBeNull();
  });
});
