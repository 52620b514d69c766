/**
 * The sentinel management API: what the REST routes, the CLI (through REST), the MCP tools and
 * target plugins (rotation) use. The engine implements it; it is offered to plugins as the host
 * service "sentinels" (the {@link SentinelIngress} part) and to core modules through the
 * SENTINELS token.
 */
import type { SentinelIngress, SentinelView } from "../plugin-api/context.js";
import type { ProviderReadiness } from "../plugin-api/provider.js";
import type { TargetRefreshResult, TargetResumeResult } from "../plugin-api/target.js";
import type { SvcEvent } from "../plugin-api/events.js";

/** A core-internal observer of every validated ingest (the MCP events poll buffers): called synchronously, before matching. */
export type IngestObserver = (provider: string, events: readonly SvcEvent[]) => void;

/** Whether an event matches some clauses, by a sentinel's rules (core/sentinels/event-filter.ts). */
export type EventFilter = (event: Pick<SvcEvent, "type" | "subjects">) => boolean;

/** A stored sentinel record (one entry of sentinels.json). */
export interface SentinelRecord extends SentinelView {
  status: "active" | "expired";
  updatedAt: number;
  /** Events delivered so far (for `until: count`). */
  deliveredCount: number;
  /** Why and when it ended, once expired. */
  endedAt?: number;
  endedReason?: "at" | "count" | "subject_terminal";
  /** The idempotency key it was created under (core/sentinels/idempotency.ts); never projected. */
  idempotency?: IdempotencyStamp;
}

/** A create's idempotency key, stored in the record it created (one atomic write for both). */
export interface IdempotencyStamp {
  key: string;
  /** The caller the key belongs to. */
  principal: string;
  /** HMAC of the request (core/sentinels/request-fingerprint.ts), never the request itself. */
  fingerprint: string;
  /** When the key was first used (epoch ms): it answers for 24 hours from then. */
  at: number;
}

export interface CreateOptions {
  /** `Idempotency-Key` header, `idempotencyKey` argument, `--idempotency-key`. */
  idempotencyKey?: string;
}

/** A sentinel as listings and get views show it: the target in its public projection. */
export interface SentinelProjection {
  id: string;
  status: SentinelRecord["status"];
  createdAt: number;
  updatedAt: number;
  deliveredCount: number;
  endedAt?: number;
  endedReason?: string;
  spec: Omit<SentinelView["spec"], "target"> & { target: Record<string, unknown> };
}

export interface SentinelStatus extends SentinelProjection {
  /** Target-specific status, e.g. the webhook outbox rows with their delivery state. */
  target?: Record<string, unknown>;
}

export interface ProviderReport {
  kind: string;
  description?: string;
  readiness: ProviderReadiness;
}

/** Sentinels by status and target kind, and their targets' deliveries (`svc status`). */
export interface SentinelSummary {
  total: number;
  active: number;
  expired: number;
  byTarget: Record<string, number>;
  deliveries: { pending: number; dead: number };
}

export interface SentinelService extends SentinelIngress {
  /**
   * Validates, lets the target verify (challenge), stores; returns the projection. With an
   * idempotency key, a repeat of the same request by the same principal within 24 hours returns
   * the sentinel it created instead (core/sentinels/idempotency.ts).
   */
  create(spec: unknown, principal: string, options?: CreateOptions): Promise<SentinelProjection>;
  list(): Promise<SentinelProjection[]>;
  /** Counts only, no projection (fast with thousands of sentinels): `GET /status`. */
  summary(): Promise<SentinelSummary>;
  /** Throws `not_found`. */
  get(id: string): SentinelView | undefined;
  project(id: string): Promise<SentinelProjection>;
  status(id: string): Promise<SentinelStatus>;
  /** Stops and removes; throws `not_found`. */
  remove(id: string): Promise<void>;
  pollNow(): Promise<{ polled: string[] }>;
  /**
   * A repeat of create by the owner (an MCP subscription's refresh): the target's `refresh`
   * (e.g. a new secret verified and made current, suspended delivery resumed). Throws `not_found`,
   * or `invalid_input` when the target kind has no refresh.
   */
  refreshTarget(id: string, input: Record<string, unknown>, principal: string): Promise<TargetRefreshResult>;
  /** `svc sentinel resume`: the target's `resume`; throws `not_found`, or `invalid_input` when the kind has none. */
  resume(id: string): Promise<TargetResumeResult>;
  /**
   * Core-internal: `observer` sees every validated ingest (provider and events), before matching;
   * returns its removal. The MCP events poll buffers are fed this way.
   */
  observeIngest(observer: IngestObserver): () => void;
  /**
   * Core-internal: a predicate over `provider`'s events with a sentinel's matching rules for
   * `match` (clauses validated, subjects normalized, default types). Throws `invalid_input`.
   */
  eventFilter(provider: string, match: unknown): Promise<EventFilter>;
  providers(): Promise<ProviderReport[]>;
  setupProvider(kind: string, input: Record<string, unknown>): Promise<Record<string, unknown>>;
}
