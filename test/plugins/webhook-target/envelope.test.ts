import { describe, expect, it } from "vitest";
import { buildEnvelope } from "../../../plugins/webhook-target/envelope.js";

const event = {
  id: "evt_01",
  type: "github.pull_request.closed",
  subjects: ["github:acme/api", "github:acme/api#42"],
  time: "2026-01-01T00:00:00.000Z",
  data: { merged: true },
};

describe("delivered event envelope", () => {
  it("serializes the documented fields in order", () => {
    const body = buildEnvelope("snt_1", event, 0);
    expect(body.toString()).toBe(
      '{"id":"evt_01","type":"github.pull_request.closed","subjects":["github:acme/api","github:acme/api#42"],"time":"2026-01-01T00:00:00.000Z","sentinelId":"snt_1","data":{"merged":true}}',
    );
  });

  it("stamps the serialization time when the event has none, and null data when absent", () => {
    const env = JSON.parse(
      buildEnvelope("snt_1", { id: "e", type: "t.o.a", subjects: ["s"] }, Date.UTC(2026, 0, 2)).toString(),
    );
    expect(env.time).toBe("2026-01-02T00:00:00.000Z");
    expect(env.data).toBeNull();
    expect(env.truncated).toBeUndefined();
  });

  it("keeps an envelope of exactly 262,144 bytes and truncates one byte more", () => {
    const overhead = buildEnvelope("snt_1", { ...event, data: "" }, 0).length;
    const exact = buildEnvelope("snt_1", { ...event, data: "x".repeat(262_144 - overhead) }, 0);
    expect(exact.length).toBe(262_144);
    expect(JSON.parse(exact.toString()).truncated).toBeUndefined();
    const over = buildEnvelope("snt_1", { ...event, data: "x".repeat(262_145 - overhead) }, 0);
    const env = JSON.parse(over.toString());
    expect(env.truncated).toBe(true);
    expect(env.data).toEqual({ summary: expect.stringContaining("262145 bytes"), subject: "github:acme/api#42" });
    expect(env.id).toBe("evt_01");
    expect(over.length).toBeLessThan(1_000);
  });

  it("refuses an event that does not fit even without its data", () => {
    expect(() => buildEnvelope("snt_1", { ...event, subjects: ["x".repeat(300_000)] }, 0)).toThrow(
      /even without its data/,
    );
  });
});
