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
    if (typeof value === "string" && value.length > 6) expect((caught as SvcError).message).not.toContain(value.slice(6));
  });

  it("property: canonical encodings of 24..64 bytes round-trip, everything else that decodes is refused", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), (bytes) => {
        const key = decodeSecret(`whsec_${Buffer.from(bytes).toString("base64")}`);
        expect(key && Buffer.compare(key, Buffer.from(bytes))).toBe(0);
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 0, maxLength: 100 }), (text) => {
        const key = decodeSecret(`whsec_${text}`);
        if (key) expect(key.toString("base64")).toBe(text);
      }),
    );
  });

  it("generates valid 32-byte secrets", () => {
    const random = createRandom();
    const a = generateSecret(random);
    expect(decodeSecret(a)?.length).toBe(32);
    expect(generateSecret(random)).not.toBe(a);
  });
});
