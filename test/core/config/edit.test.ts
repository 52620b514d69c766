import { describe, expect, it } from "vitest";
import { parseCliValue } from "../../../core/config/edit.js";

describe("command-line values", () => {
  it("values: JSON when it parses, else the string; --string forces a string", () => {
    expect(parseCliValue("8080")).toBe(8080);
    expect(parseCliValue("true")).toBe(true);
    expect(parseCliValue('{"a":1}')).toEqual({ a: 1 });
    expect(parseCliValue("hello world")).toBe("hello world");
    expect(parseCliValue("8080", true)).toBe("8080");
    expect(parseCliValue('""')).toBe("");
  });
});
