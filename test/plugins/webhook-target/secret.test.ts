import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createRandom } from "../../../core/runtime/clock.js";
import { SvcError } from "../../../core/errors.js";
import { decodeSecret, generateSecret, parseSecret } from "../../../plugins/webhook-target/secret.js";

const b64 = (n: number, fill = 7) => Buffer.alloc(n, fill).toString("base64");

describe("webhook secret format", () => {
  it("accepts the reference secret and canonical padded base64 of 24..64 bytes", () => {
    expect(decodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")?.length).toBe(24);
    for (const n of [24, 25, 26, 32, 63, 64]) expect(decodeSecret(`whsec_${b64(n)}`)?.length).toBe(n);
  });

  it.each([
    ["no prefix", b64(32)],
    ["wrong prefix", `wsec_${b64(32)}`],
    ["empty", "whsec_"],
    ["23 bytes", `whsec_${b64(23)}`],
    ["65 bytes", `whsec_${b64(65)}`],
    ["url-safe alphabet", `whsec_${Buffer.alloc(32, 0xfb).toString("base64url")}=`],
    ["missing padding", `whsec_${b64(25).replace(/=+$/, "")}`],
    ["non-canonical trailing bits", `whsec_${"A".repeat(33)}B==`],
    ["inner whitespace", `whsec_${b64(32).slice(0, 8)} ${b64(32).slice(8)}`],
    ["trailing newline", `whsec_${b64(32)}\n`],
    ["stray character", `whsec_${b64(32)}!`],
    ["not a string", 42],
  ])("rejects %s", (_name, value) => {
    expect(decodeSecret(value)).toBeUndefined();
    let caught: unknown;
    try {
      parseSecret(value);
    } catch (err) {
      caught = err;
    }
    expect(SvcError.is(caught)).toBe(true);
    expect((caught as SvcError).code).toBe("challenge_failed");
    if (typeof value === "string" && value.length > 6)
      expect((caught as SvcError).message).not.toContain(value.slice(6));
  });

  it("property: canonical encodings of 24..64 bytes round-trip, everything else that decodes is refused", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), (bytes) => {
        const key = decodeSecret(`whsec_${Buffer.from(bytes).toString("base64")}`);
        expect(key && Buffer.compare(key, Buffer.from(bytes))).toBe(0);
      }),
    );
    // Texts near the format: valid encodings of 0..80 bytes (some out of range), the same with one
    // character replaced, removed or inserted, and strings over the base64 alphabet with padding.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char = fc.constantFrom(...alphabet, "=", "-", "_", " ", "\n", "!");
    const encoding = fc
      .uint8Array({ minLength: 0, maxLength: 80, size: "max" })
      .map((b) => Buffer.from(b).toString("base64"));
    const near = fc.oneof(
      encoding,
      fc
        .tuple(encoding, fc.nat(), char)
        .map(([t, i, c]) => t.slice(0, i % (t.length + 1)) + c + t.slice((i % (t.length + 1)) + 1)),
      fc.tuple(encoding, fc.nat()).map(([t, i]) => t.slice(0, i % (t.length + 1)) + t.slice((i % (t.length + 1)) + 1)),
      fc
        .tuple(encoding, fc.nat(), char)
        .map(([t, i, c]) => t.slice(0, i % (t.length + 1)) + c + t.slice(i % (t.length + 1))),
      fc
        .tuple(fc.array(fc.constantFrom(...alphabet), { maxLength: 90, size: "max" }), fc.constantFrom("", "=", "=="))
        .map(([cs, pad]) => cs.join("") + pad),
    );
    let accepted = 0;
    let refused = 0;
    fc.assert(
      fc.property(near, (text) => {
        // Canonical: the exact standard, padded base64 of some bytes (of an accepted length).
        const bytes = Buffer.from(text, "base64");
        const valid = text.length > 0 && bytes.toString("base64") === text && bytes.length >= 24 && bytes.length <= 64;
        const key = decodeSecret(`whsec_${text}`);
        expect(key !== undefined, JSON.stringify(text)).toBe(valid);
        if (key) {
          expect(key.equals(bytes)).toBe(true);
          accepted++;
        } else refused++;
      }),
      { numRuns: 2000 },
    );
    // Both branches really ran.
    expect(accepted).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(100);
  });

  it("generates valid 32-byte secrets", () => {
    const random = createRandom();
    const a = generateSecret(random);
    expect(decodeSecret(a)?.length).toBe(32);
    expect(generateSecret(random)).not.toBe(a);
  });
});
