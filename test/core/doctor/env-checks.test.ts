import { describe, expect, it } from "vitest";
import { checkNodeVersion, enginesFloor } from "../../../core/doctor/env/node-version.js";

describe("the Node version check", () => {
  it("is an error below package.json's engines floor, a warning below 22, nothing from 22 on", () => {
    expect(enginesFloor()).toBe(">=20.19");
    expect(checkNodeVersion("20.18.3", ">=20.19")).toEqual([
      expect.objectContaining({
        severity: "error",
        file: "env:node",
        message: expect.stringContaining("below its engines floor >=20.19"),
      }),
    ]);
    expect(checkNodeVersion("20.19.0", ">=20.19")).toEqual([
      expect.objectContaining({
        severity: "warn",
        message: expect.stringContaining("Node 20 is past its end of life"),
      }),
    ]);
    for (const v of ["22.0.0", "24.11.1", "26.0.0"]) expect(checkNodeVersion(v, ">=20.19")).toEqual([]);
  });
});
