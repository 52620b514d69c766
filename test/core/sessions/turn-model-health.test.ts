import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../core/runtime/clock.js";
import { failureReason, outcomeOf, TurnModelHealth } from "../../../core/sessions/turn-model-health.js";

const ok = { status: 200 };
const down = { status: 502, error: "upstream unreachable (ECONNREFUSED)" };

describe("outcomeOf / failureReason", () => {
  it("fails a call at status 400 and over; a 2xx cut by its client is neither", () => {
    expect(outcomeOf(ok)).toBe("ok");
    expect(outcomeOf({ status: 204 })).toBe("ok");
    expect(outcomeOf({ status: 500 })).toBe("failed");
    expect(outcomeOf({ status: 429, error: "llm-endpoint: rate" })).toBe("failed");
    expect(outcomeOf({ status: 499, error: "client disconnected" })).toBe("failed");
    expect(outcomeOf({ status: 200, error: "client disconnected" })).toBe("cut");
  });

  it("says the status and the sidecar's words, bounded", () => {
    expect(failureReason(down)).toBe("status 502: upstream unreachable (ECONNREFUSED)");
    expect(failureReason({ status: 503 })).toBe("status 503");
    expect(failureReason({ status: 500, error: "x".repeat(1000) }).length).toBeLessThan(310);
  });
});

describe("TurnModelHealth at a turn's end", () => {
  it("a turn whose every call failed ends as an error naming the count and the last reason", () => {
    const clock = new FakeClock();
    const h = new TurnModelHealth();
    h.begin();
    h.note({ status: 500 }, clock.now());
    h.note({ status: 200, error: "client disconnected" }, clock.now());
    h.note(down, clock.now());
    expect(h.end("end_turn")).toBe(
      "every model call of this turn failed (2 calls): status 502: upstream unreachable (ECONNREFUSED)",
    );
    h.begin();
    h.note({ status: 401, error: "llm-endpoint: route has no key" }, clock.now());
    expect(h.end("end_turn")).toBe(
      "every model call of this turn failed (1 call): status 401: llm-endpoint: route has no key",
    );
  });

  it("one success, no calls, only cut calls or a cancelled turn: no error", () => {
    const h = new TurnModelHealth();
    h.begin();
    h.note(down, 0);
    h.note(ok, 1);
    h.note(down, 2);
    expect(h.end("end_turn")).toBeUndefined();
    h.begin();
    expect(h.end("end_turn")).toBeUndefined();
    h.begin();
    h.note({ status: 200, error: "client disconnected" }, 0);
    expect(h.end("end_turn")).toBeUndefined();
    h.begin();
    h.note({ status: 499, error: "client disconnected" }, 0);
    expect(h.end("cancelled")).toBeUndefined();
  });

  it("calls outside a turn are not counted, and each turn starts over", () => {
    const h = new TurnModelHealth();
    h.note(down, 0);
    h.begin();
    expect(h.end("end_turn")).toBeUndefined();
    h.begin();
    h.note(down, 0);
    h.end("end_turn");
    h.begin();
    h.note(ok, 0);
    expect(h.end("end_turn")).toBeUndefined();
  });
});

describe("TurnModelHealth while a turn runs (fake clock)", () => {
  const T = 60_000;

  it("fails for the threshold from the first failure, with a failure within it", () => {
    const clock = new FakeClock();
    const h = new TurnModelHealth();
    h.begin();
    clock.advance(10_000);
    expect(h.failing(clock.now(), T)).toBeUndefined();
    const first = clock.now();
    h.note(down, first);
    for (let i = 0; i < 5; i++) {
      clock.advance(11_000);
      h.note(down, clock.now());
      expect(h.failing(clock.now(), T)).toBeUndefined();
    }
    clock.set(first + T - 1);
    expect(h.failing(clock.now(), T)).toBeUndefined();
    clock.set(first + T);
    expect(h.failing(clock.now(), T)).toEqual({
      sinceMs: first,
      reason: "model calls failing for 60s: status 502: upstream unreachable (ECONNREFUSED)",
    });
  });

  it("a success starts the count over; no failure within the threshold is no failing", () => {
    const clock = new FakeClock();
    const h = new TurnModelHealth();
    h.begin();
    h.note(down, clock.now());
    clock.advance(T / 2);
    h.note(ok, clock.now());
    clock.advance(T / 2);
    const second = clock.now();
    h.note({ status: 503 }, second);
    clock.advance(T);
    expect(h.failing(clock.now(), T)?.sinceMs).toBe(second);
    clock.advance(1);
    // The last failure is older than the threshold: the agent has stopped calling (the quiet rule's case).
    expect(h.failing(clock.now(), T)).toBeUndefined();
  });

  it("is never failing outside a turn", () => {
    const h = new TurnModelHealth();
    h.begin();
    h.note(down, 0);
    h.end("end_turn");
    expect(h.failing(T, T)).toBeUndefined();
  });
});
