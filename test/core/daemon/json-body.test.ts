import { describe, expect, it } from "vitest";
import { SvcError } from "../../../core/errors.js";
import { parseJsonBody } from "../../../core/daemon/json-body.js";

function errorOf(text: string): SvcError {
  try {
    parseJsonBody(Buffer.from(text));
  } catch (err) {
    if (SvcError.is(err)) return err;
    throw err;
  }
  throw new Error("expected an error");
}

describe("parseJsonBody", () => {
  it("parses JSON", () => {
    expect(parseJsonBody(Buffer.from('{"a":[1,"x",true,null]}'))).toEqual({ a: [1, "x", true, null] });
  });

  it("an empty body asks for JSON", () => {
    expect(errorOf("").message).toMatch(/empty; a JSON body is required/);
  });

  it.each([
    ['{"secret": whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}', "whsec", 11],
    ['{"token": "tok-SECRET123"  "x": 1}', "tok-SECRET", 27],
    ['{"k": "sk-ant-SECRET456\u0001"}', "sk-ant", 23],
    ['["sk-ant-SECRET789", tru]', "sk-ant", 24],
    ['{"a": "sk-ant-SECRETxyz"}trailing', "sk-ant", 25],
  ])("a malformed body %j is refused without quoting it", (text, secret, position) => {
    const e = errorOf(text);
    expect(e.code).toBe("invalid_input");
    expect(e.message).toMatch(/^the request body is not valid JSON: /);
    expect(e.message).not.toContain(secret);
    expect(e.message).not.toContain("SECRET");
    expect(e.message).toContain(`at position ${position} (line 1)`);
  });

  it("a body cut short says so, and a fault on a later line names the line", () => {
    expect(errorOf('{"secret": "whsec_abc').message).toMatch(/ends at character 21 before the JSON value is complete/);
    expect(errorOf('{\n  "a": 1,\n  "b": whsec_x\n}').message).toMatch(
      /an unexpected character at position 19 \(line 3\)/,
    );
  });
});
