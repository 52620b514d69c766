/**
 * The contract between the events catalog (which event types svc can deliver, from the loaded
 * providers' vocabularies) and the methods that use it (`events/list`, `events/subscribe`,
 * `events/poll`). See docs/mcp-events.md.
 */
import { token } from "../tokens.js";

export type DeliveryMode = "webhook" | "poll";

/** One entry of `events/list` (design sketch, "Listing Available Events"). */
export interface EventTypeDescriptor {
  /** e.g. `github.pull_request`, `agentpush.event`, `session.lifecycle`. */
  name: string;
  description: string;
  delivery: DeliveryMode[];
  /** JSON Schema (type object) of the subscription arguments; every property described. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of an occurrence's `data` (`{type, subjects, payload}`). */
  payloadSchema: Record<string, unknown>;
}

/** What a subscription with `(name, arguments)` watches: one sentinel's provider and match clauses. */
export interface ResolvedEventType {
  name: string;
  /** The provider slug whose events it sees (a sentinel only ever sees its own provider's). */
  provider: string;
  /** Sentinel match clauses (SPEC.md SentinelSpec `match`). */
  match: Array<{ subject: string; types?: string[] }>;
}

export interface EventCatalog {
  /** Every event type, in a stable order (the pagination order of `events/list`). */
  list(): Promise<EventTypeDescriptor[]>;
  /**
   * The provider and clauses for `(name, arguments)`. Throws McpRpcError -32011 (`data.kind:
   * "event"`) for an unknown name, -32602 (`data.reason: "invalid_arguments"`, the message naming
   * the argument and what is allowed) for arguments its inputSchema refuses.
   */
  resolve(name: string, args: Record<string, unknown>): Promise<ResolvedEventType>;
}

export const EVENT_CATALOG = token<EventCatalog>("event-catalog");
