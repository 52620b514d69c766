import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../core/runtime/clock.js";
import {
  challengeCacheKey,
  createChallengeCache,
  normalizeCallbackUrl,
} from "../../../plugins/webhook-target/challenge-cache.js";

describe("normalizeCallbackUrl", () => {
  it.each([
    ["HTTPS://Receiver.Example.COM:443/Hook?A=B", "https://receiver.example.com/Hook?A=B"],
    ["https://receiver.example.com:8443/x", "https://receiver.example.com:8443/x"],
    ["https://receiver.example.com", "https://receiver.example.com/"],
    ["https://[::1]:443/", "https://[::1]/"],
  ])("%s → %s", (input, expected) => expect(normalizeCallbackUrl(input)).toBe(expected));

  it("is idempotent and case-insensitive in scheme and host", () => {
    // A label starting `xn--` must be valid punycode (an A-label): "xn--.a" is not a URL at all
    // (see the next test), so the generator leaves such labels out.
    const host = fc
      .stringMatching(/^[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,10}){1,3}$/)
      .filter((h) => !/(^|\.)xn--/.test(h));
    fc.assert(
      fc.property(host, fc.boolean(), fc.stringMatching(/^[A-Za-z0-9/_-]{0,30}$/), (h, withPort, path) => {
        const url = `https://${h}${withPort ? ":443" : ""}/${path}`;
        const upper = `HTTPS://${h.toUpperCase()}/${path}`;
        const n = normalizeCallbackUrl(url);
        return n === normalizeCallbackUrl(n) && n === normalizeCallbackUrl(upper);
      }),
    );
  });

  it("rejects a host with an invalid punycode label instead of normalizing it", () => {
    expect(() => normalizeCallbackUrl("https://xn--.example/")).toThrow();
  });
});

describe("challenge cache", () => {
  it("keys never contain the secret", () => {
    const secret = "whsec_" + Buffer.alloc(32, 3).toString("base64");
    const key = challengeCacheKey("local", "https://a.example/", secret);
    expect(key).not.toContain(secret.slice(6));
    expect(key).not.toBe(challengeCacheKey("local", "https://a.example/", secret + "x"));
  });

  it("expires exactly at 10 minutes on the injected clock", () => {
    const clock = new FakeClock();
    const cache = createChallengeCache(clock);
    cache.remember("k");
    clock.advance(599_999);
    expect(cache.has("k")).toBe(true);
    clock.advance(1);
    expect(cache.has("k")).toBe(false);
    expect(cache.has("other")).toBe(false);
  });

  it("stays bounded under many keys", () => {
    const clock = new FakeClock();
    const cache = createChallengeCache(clock);
    for (let i = 0; i < 10_000; i++) cache.remember(`k${i}`);
    expect(cache.has("k9999")).toBe(true);
    expect(cache.has("k0")).toBe(false);
  });
});
