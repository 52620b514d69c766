/** The pure rules of the events extension: TTL grants, the secret's shape, callback failure categories, delivery status, caller keys. */
import { describe, expect, it } from "vitest";
import { McpRpcError } from "../../../core/daemon/mcp/extensions.js";
import { SvcError } from "../../../core/errors.js";
import { deliveryStatusOf } from "../../../core/mcp-events/delivery-status.js";
import { MCP_EVENTS_LIMITS as L } from "../../../core/mcp-events/limits.js";
import { pollerKey, subscriberKey } from "../../../core/mcp-events/principal-key.js";
import { asEventsError, callbackReason } from "../../../core/mcp-events/rpc-errors.js";
import { toRpcError } from "../../../core/daemon/mcp/rpc-error.js";
import { grantExpiry } from "../../../core/mcp-events/ttl.js";
import { checkWebhookSecret } from "../../../core/mcp-events/webhook-secret.js";
import { SessionTokens } from "../../../core/workspaces/lineage.js";

/** What `fn` threw: an McpRpcError, or an SvcError (the one mapping of extension methods answers it). */
function thrown(fn: () => unknown): McpRpcError | SvcError {
  try {
    fn();
  } catch (err) {
    if (err instanceof McpRpcError || SvcError.is(err)) return err;
    throw err;
  }
  throw new Error("expected an McpRpcError or an SvcError");
}

describe("TTL grants", () => {
  const now = 1_000_000;
  it("default when omitted, clamped to [min, max] when finite, none for null", () => {
    expect(grantExpiry(undefined, now)).toBe(now + L.ttlDefaultMs);
    expect(grantExpiry(0, now)).toBe(now + L.ttlMinMs);
    expect(grantExpiry(1_000, now)).toBe(now + L.ttlMinMs);
    expect(grantExpiry(600_000, now)).toBe(now + 600_000);
    expect(grantExpiry(365 * 86_400_000, now)).toBe(now + L.ttlMaxMs);
    expect(grantExpiry(null, now)).toBeNull();
  });
  it.each([[-1], [1.5], ["3600000"], [Number.NaN], [{}], [true]])("refuses %s with -32602 invalid_ttl", (ttl) => {
    expect(thrown(() => grantExpiry(ttl, now))).toMatchObject({ code: -32602, data: { reason: "invalid_ttl" } });
  });
});

describe("webhook secrets", () => {
  const of = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString("base64")}`;
  it("accepts whsec_ + canonical base64 of 24 to 64 bytes", () => {
    for (const n of [24, 32, 64]) expect(checkWebhookSecret(of(n))).toBe(of(n));
  });
  it.each([
    ["23 bytes", of(23)],
    ["65 bytes", of(65)],
    ["no prefix", Buffer.alloc(32, 7).toString("base64")],
    ["unpadded", of(32).replace(/=+$/, "")],
    ["url-safe letters", `whsec_${Buffer.alloc(32, 251).toString("base64url")}`],
    ["not a string", 42],
  ])("refuses %s with -32602 invalid_secret, never echoing it", (_n, secret) => {
    const err = thrown(() => checkWebhookSecret(secret));
    expect(err).toMatchObject({ code: -32602, data: { reason: "invalid_secret" } });
    if (typeof secret === "string") expect(err.message).not.toContain(secret.slice(6));
  });
});

describe("callback failures as the sketch's categories", () => {
  it.each<[SvcError, string]>([
    // The verifier states the category once it tried the POST (its tests reach real endpoints).
    ...["connection_refused", "timeout", "tls_error", "challenge_failed"].map(
      (reason) =>
        [new SvcError("timeout", "challenge verification of h failed", { details: { reason } }), reason] as [
          SvcError,
          string,
        ],
    ),
    [new SvcError("non_2xx", "it answered 503", { details: { reason: "challenge_failed" } }), "challenge_failed"],
    // Refused before anything was sent (a malformed secret): no category stated.
    [new SvcError("challenge_failed", "the webhook secret is malformed"), "challenge_failed"],
    [new SvcError("timeout", "x", { details: { reason: "not a category" } }), "challenge_failed"],
  ])("%s -> %s", (err, reason) => {
    expect(callbackReason(err)).toBe(reason);
    expect(asEventsError(err)).toMatchObject({ code: -32015, data: { reason, svcReason: err.code } });
  });
  it("maps svc's errors whose meaning is the extension's own; the rest go to the one mapping of every extension method", () => {
    expect(asEventsError(new SvcError("non_https", "only https"))).toMatchObject({
      code: -32602,
      data: { reason: "invalid_url" },
    });
    expect(asEventsError(new SvcError("invalid_input", "bad subject"))).toMatchObject({
      code: -32602,
      data: { reason: "invalid_arguments" },
    });
    const answered = (err: unknown) => toRpcError(asEventsError(err));
    expect(answered(new SvcError("forbidden", "no"))).toMatchObject({ code: -32012 });
    expect(answered(new SvcError("unauthorized", "no"))).toMatchObject({ code: -32012 });
    expect(answered(new SvcError("not_found", "no"))).toMatchObject({ code: -32011 });
    expect(answered(new SvcError("unavailable", "later"))).toMatchObject({
      code: -32603,
      message: "later",
      data: { reason: "unavailable" },
    });
    // Anything unexpected: a generic message (its own may quote paths or inputs); the log has it.
    const logged: unknown[] = [];
    expect(toRpcError(asEventsError(new Error("boom at /home/me/secret-path")), (e) => logged.push(e))).toMatchObject({
      code: -32603,
      message: expect.not.stringContaining("boom"),
    });
    expect(logged).toHaveLength(1);
  });
});

describe("deliveryStatus", () => {
  it("is the target's status, `since` named `failedSince`, with lastError only ever a category", () => {
    expect(deliveryStatusOf({ kind: "webhook" })).toEqual({ active: true, lastError: null });
    expect(
      deliveryStatusOf({
        deliveryStatus: { active: true, lastDeliveryAt: "1970-01-01T00:00:00.000Z", lastError: "http_5xx" },
      }),
    ).toEqual({
      active: true,
      lastError: "http_5xx",
      lastDeliveryAt: "1970-01-01T00:00:00.000Z",
    });
    expect(
      deliveryStatusOf({
        deliveryStatus: {
          active: false,
          reason: "consecutive_failures",
          since: "1970-01-01T00:00:01.000Z",
          lastError: "timeout",
        },
      }),
    ).toEqual({
      active: false,
      lastError: "timeout",
      failedSince: "1970-01-01T00:00:01.000Z",
      reason: "consecutive_failures",
    });
    expect(
      deliveryStatusOf({ deliveryStatus: { active: true, lastError: "<html>the receiver's own words</html>" } }),
    ).toEqual({ active: true, lastError: null });
  });
});

describe("whose subscription a call addresses", () => {
  const tokens = new SessionTokens();
  const token = tokens.issue("ses_1", "ab".repeat(16));
  const sessionOf = (t: string) => tokens.sessionOf(t);
  it("the owner by a bearer token (either), a session by its token, a pairing by its id", () => {
    expect(subscriberKey({ principal: "token:boot" }, sessionOf, "m")).toBe("owner");
    expect(subscriberKey({ principal: "token:stable" }, sessionOf, "m")).toBe("owner");
    expect(subscriberKey({ principal: "loopback", sessionToken: token }, sessionOf, "m")).toBe("session:ses_1");
    expect(subscriberKey({ principal: "token:boot", sessionToken: token }, sessionOf, "m")).toBe("session:ses_1");
    expect(subscriberKey({ principal: "remote:pairing:p1:operate" }, sessionOf, "m")).toBe("pairing:p1");
    // A remote caller's session token is not honoured.
    expect(pollerKey({ principal: "remote:pairing:p1:read", sessionToken: token }, sessionOf, "m")).toBe("pairing:p1");
  });
  it("a bare loopback caller polls under a key of its own (never the owner's) but may not subscribe; read-only callers poll under their own key", () => {
    expect(pollerKey({ principal: "loopback" }, sessionOf, "m")).toBe("loopback");
    expect(pollerKey({ principal: "token:boot" }, sessionOf, "m")).toBe("owner");
    expect(thrown(() => subscriberKey({ principal: "loopback" }, sessionOf, "events/subscribe"))).toMatchObject({
      code: "forbidden",
      message: expect.stringMatching(/bearer token .*session token/),
    });
    for (const p of ["anonymous", "remote:tunnel", "remote:sealed"]) {
      expect(pollerKey({ principal: p }, sessionOf, "m")).toBe(p);
      expect(thrown(() => subscriberKey({ principal: p }, sessionOf, "m")).code).toBe("forbidden");
    }
  });
  it("a session token that names no live session is refused", () => {
    expect(
      thrown(() => pollerKey({ principal: "loopback", sessionToken: "svcst_nobody" }, sessionOf, "events/poll")),
    ).toMatchObject({ code: "forbidden", message: expect.stringMatching(/names no live session/) });
    tokens.revoke("ses_1");
    expect(thrown(() => subscriberKey({ principal: "token:boot", sessionToken: token }, sessionOf, "m")).code).toBe(
      "forbidden",
    );
  });
});
