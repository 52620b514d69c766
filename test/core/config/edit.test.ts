import { describe, expect, it } from "vitest";
import { parseCliValue, parseKey } from "../../../core/config/edit.js";
import { parseKey as dottedParseKey } from "../../../core/config/dotted-path.js";

describe("command-line values", () => {
  it("values: JSON when it parses, else the string; --string forces a string", () => {
    expect(parseCliValue("8080")).toBe(8080);
    expect(parseCliValue("true")).toBe(true);
    expect(parseCliValue('{"a":1}')).toEqual({ a: 1 });
    expect(parseCliValue("hello world")).toBe("hello world");
    expect(parseCliValue("8080", true)).toBe("8080");
    expect(parseCliValue('""')).toBe("");
  });

  it("the key parser is the one of dotted-path.ts", () => expect(parseKey).toBe(dottedParseKey));
});
