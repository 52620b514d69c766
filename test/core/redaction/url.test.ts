import { describe, expect, it } from "vitest";
import { redactUrl, redactUrlsDeep, redactUrlsIn } from "../../../core/redaction/url.js";

describe("redactUrl: URL credentials out of listings", () => {
  it.each([
    ["https://hooks.example.com/svc?token=abc123", "https://hooks.example.com/svc?token=REDACTED"],
    ["https://h.example/p?a=1&b=two&flag&empty=", "https://h.example/p?a=REDACTED&b=REDACTED&flag&empty="],
    ["https://alice:s3cret@h.example/p", "https://***@h.example/p"],
    ["https://alice@h.example:8443/p?k=v#frag", "https://***@h.example:8443/p?k=REDACTED#REDACTED"],
    ["https://h.example/plain/path", "https://h.example/plain/path"],
    ["https://h.example/p?t=a%20b%26c", "https://h.example/p?t=REDACTED"],
    // Keys that a replacement pattern would expand: the values stay redacted.
    ["https://h.example/p?token=SECRET&$&=1", "https://h.example/p?token=REDACTED&$&=REDACTED"],
    ["https://h.example/p?token=SECRET&$'=1#f", "https://h.example/p?token=REDACTED&$%27=REDACTED#REDACTED"],
  ])("%s → %s", (input, out) => {
    expect(redactUrl(input)).toBe(out);
  });

  it("redacts a text that does not parse by its shape", () => {
    expect(redactUrl("https://u:p@[bad/p?token=x")).toBe("https://***@[bad/p?REDACTED");
  });

  it("redacts every URL inside a text and at any depth of a value, leaving other text alone", () => {
    expect(redactUrlsIn("POST https://h.example/a?t=x failed; see https://b.example/")).toBe(
      "POST https://h.example/a?t=REDACTED failed; see https://b.example/",
    );
    expect(
      redactUrlsDeep({ url: "https://h.example/?k=v", n: 3, list: ["x", { u: "http://u:p@h/" }], none: null }),
    ).toEqual({ url: "https://h.example/?k=REDACTED", n: 3, list: ["x", { u: "http://***@h/" }], none: null });
  });
});
