import { describe, expect, it } from "vitest";
import { parseTtl } from "../../../core/remote/ttl.js";
import { backoffDelay } from "../../../core/remote/pairing/backoff.js";

describe("pair offer --ttl", () => {
  it("reads 90s, 10m, 2h and bare seconds, within 1s..24h", () => {
    expect(parseTtl("90s")).toBe(90_000);
    expect(parseTtl("10m")).toBe(600_000);
    expect(parseTtl("2h")).toBe(7_200_000);
    expect(parseTtl("45")).toBe(45_000);
    for (const bad of ["soon", "0s", "25h", "-1m", "1.5h", ""]) expect(() => parseTtl(bad)).toThrow(/--ttl/);
  });
});

describe("reconnect backoff", () => {
  it("doubles from 250 ms to the cap, with ±20 % jitter", () => {
    expect([0, 1, 2, 3].map((n) => backoffDelay(n, 15_000, () => 0.5))).toEqual([250, 500, 1000, 2000]);
    expect(backoffDelay(30, 15_000, () => 0.5)).toBe(15_000);
    expect(backoffDelay(0, 15_000, () => 0)).toBe(200);
    expect(backoffDelay(0, 15_000, () => 1)).toBe(300);
  });
});
