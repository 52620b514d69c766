import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { McpRpcError } from "../../../core/daemon/mcp/extensions.js";
import {
  SUBSCRIPTION_ID,
  canonicalJson,
  normalizeCallbackUrl,
  subscriptionId,
  type SubscriptionKey,
} from "../../../core/mcp-events/subscription-id.js";

const reversed = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(reversed);
  if (v !== null && typeof v === "object")
    return Object.fromEntries(
      Object.entries(v)
        .reverse()
        .map(([k, x]) => [k, reversed(x)]),
    );
  return v;
};

const keyArb: fc.Arbitrary<SubscriptionKey> = fc.record({
  principalKey: fc.oneof(
    fc.constant("owner"),
    fc.string().map((s) => `session:${s}`),
    fc.string().map((s) => `pairing:${s}`),
  ),
  url: fc.webUrl({ validSchemes: ["https"] }),
  name: fc.string({ minLength: 1 }),
  arguments: fc.dictionary(fc.string(), fc.jsonValue()),
});

describe("subscription ids", () => {
  it("are sub_ + 32 hex digits, and the arguments' key order does not matter (at any depth)", () => {
    fc.assert(
      fc.property(keyArb, (key) => {
        const id = subscriptionId(key);
        expect(id).toMatch(SUBSCRIPTION_ID);
        expect(subscriptionId({ ...key, arguments: reversed(key.arguments) as Record<string, unknown> })).toBe(id);
      }),
    );
  });

  it("differ whenever any part of the key differs (principal, url, name or canonical arguments)", () => {
    fc.assert(
      fc.property(keyArb, keyArb, (a, b) => {
        const same =
          canonicalJson([a.principalKey, a.url, a.name, a.arguments]) ===
          canonicalJson([b.principalKey, b.url, b.name, b.arguments]);
        expect(subscriptionId(a) === subscriptionId(b)).toBe(same);
      }),
    );
    const base: SubscriptionKey = {
      principalKey: "owner",
      url: "https://rx.example/hook",
      name: "agentpush.event",
      arguments: { subject: "ci:*" },
    };
    const ids = new Set(
      [
        base,
        { ...base, principalKey: "session:s1" },
        { ...base, url: "https://rx.example/hook2" },
        { ...base, name: "github.pull_request" },
        { ...base, arguments: { subject: "ci:api" } },
        { ...base, arguments: {} },
      ].map(subscriptionId),
    );
    expect(ids.size).toBe(6);
  });

  it("are the RFC 8785 SHA-256 of [principal, url, name, arguments], truncated", () => {
    // canonical JSON of the key: ["owner","https://rx.example/hook","n",{"a":1,"b":[true,null]}]
    const id = subscriptionId({
      principalKey: "owner",
      url: "https://rx.example/hook",
      name: "n",
      arguments: { b: [true, null], a: 1 },
    });
    const expected = `sub_${createHash("sha256").update('["owner","https://rx.example/hook","n",{"a":1,"b":[true,null]}]').digest("hex").slice(0, 32)}`;
    expect(id).toBe(expected);
  });
});

describe("callback URLs", () => {
  it("are compared normalized: case of the host, default port, no fragment", () => {
    expect(normalizeCallbackUrl("https://RX.example:443/hook#frag")).toBe("https://rx.example/hook");
    expect(normalizeCallbackUrl("https://rx.example/hook?k=v")).toBe("https://rx.example/hook?k=v");
  });

  it.each([
    ["http://rx.example/hook", /only https/],
    ["https://user:pw@rx.example/hook", /credentials/],
    ["not a url", /does not parse/],
    ["", /required/],
    [42, /required/],
  ])("refuses %s with -32602 invalid_url", (url, message) => {
    let err: unknown;
    try {
      normalizeCallbackUrl(url);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(McpRpcError);
    expect(err).toMatchObject({ code: -32602, data: { reason: "invalid_url" } });
    expect((err as Error).message).toMatch(message);
  });
});
