/**
 * The sketch's subscription identity: the key `(principal, delivery.url, name, arguments)` and
 * the id derived from it, `sub_` + the first 32 hex digits of SHA-256 over the RFC 8785
 * canonical JSON of `[principalKey, url, name, arguments]`. Arguments compare by canonical JSON
 * (key order does not matter); absent arguments are `{}`. The id routes deliveries
 * (`X-MCP-Subscription-Id`); it is never accepted as input.
 */
import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import { SvcError } from "../errors.js";
import { parseHttpsUrl } from "../egress/gate.js";
import { invalidParams } from "./rpc-errors.js";

export const SUBSCRIPTION_ID = /^sub_[0-9a-f]{32}$/;

export interface SubscriptionKey {
  principalKey: string;
  /** As {@link normalizeCallbackUrl} gives it. */
  url: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** RFC 8785 canonical JSON. */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new SvcError("invalid_input", "the value has no JSON form");
  return text;
}

export function subscriptionId(key: SubscriptionKey): string {
  const text = canonicalJson([key.principalKey, key.url, key.name, key.arguments]);
  return `sub_${createHash("sha256").update(text, "utf8").digest("hex").slice(0, 32)}`;
}

/**
 * The callback URL as svc stores and compares it (the webhook target's own form): https, no
 * credentials, WHATWG-normalized, without the fragment. Throws -32602 `invalid_url`.
 */
export function normalizeCallbackUrl(url: unknown): string {
  if (typeof url !== "string" || url === "")
    throw invalidParams("invalid_url", "delivery.url is required: an https:// callback URL");
  let parsed: URL;
  try {
    parsed = parseHttpsUrl(url);
  } catch (err) {
    throw invalidParams("invalid_url", `delivery.url: ${(err as Error).message}`);
  }
  parsed.hash = "";
  return parsed.toString();
}
