/** The webhook target as stored in the sentinel record (sentinels.json): never a raw secret, only vault refs. */
import { parseHttpsUrl } from "../../core/plugin-api/index.js";
import type { DeliveryFailure } from "./failure-category.js";

/** What makes a sentinel an MCP events subscription (core/mcp-events creates it). */
export interface McpSubscription {
  /** The subscription's derived id (`sub_` + hex): the `X-MCP-Subscription-Id` of every POST. */
  subscriptionId: string;
  /** The subscribed event name: the `name` of each delivered EventOccurrence. */
  eventName: string;
}

/** Delivery paused by endpoint health (see endpoint-health.ts); cleared by a resume or a refresh. */
export interface Suspension {
  /** Epoch ms. */
  since: number;
  reason: "consecutive_failures";
  /** The category of the failure that suspended it (never a raw answer). */
  lastError: DeliveryFailure;
}

export interface StoredWebhookTarget {
  kind: "webhook";
  url: string;
  secretRef: string;
  /** The secret before the last rotation, kept for the dual-sign window. */
  prevSecretRef?: string;
  /** Epoch ms of the last rotation. */
  rotatedAt?: number;
  /** Present for an MCP subscription: deliveries are EventOccurrences under its id. */
  mcp?: McpSubscription;
  /** Present while delivery is suspended. */
  suspended?: Suspension;
  /** The challenge verification at creation: when, and whether a cached success answered it (nothing sent then). */
  verification?: { at: number; cached: boolean };
}

export function asStoredTarget(stored: Record<string, unknown> | undefined): StoredWebhookTarget | undefined {
  if (stored?.kind !== "webhook" || typeof stored.url !== "string" || typeof stored.secretRef !== "string")
    return undefined;
  return stored as unknown as StoredWebhookTarget;
}

/** The `X-MCP-Subscription-Id` of the sentinel's POSTs: its MCP subscription's id, else the sentinel id. */
export function subscriptionIdOf(sentinelId: string, stored: StoredWebhookTarget | undefined): string {
  return stored?.mcp?.subscriptionId ?? sentinelId;
}

/** A callback URL as stored: the gate's one URL rule (https, no credentials), without the fragment. */
export function callbackUrl(url: string): string {
  const parsed = parseHttpsUrl(url);
  parsed.hash = "";
  return parsed.toString();
}
