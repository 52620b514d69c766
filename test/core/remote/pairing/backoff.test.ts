import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../../../core/remote/pairing/backoff.js";

describe("reconnect backoff", () => {
  it("doubles from 250 ms to the cap, with ±20 % jitter", () => {
    expect([0, 1, 2, 3].map((n) => backoffDelay(n, 15_000, () => 0.5))).toEqual([250, 500, 1000, 2000]);
    expect(backoffDelay(30, 15_000, () => 0.5)).toBe(15_000);
    expect(backoffDelay(0, 15_000, () => 0)).toBe(200);
    expect(backoffDelay(0, 15_000, () => 1)).toBe(300);
  });
});
