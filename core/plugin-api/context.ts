import type { Clock, Random, Sleep } from "../runtime/clock.js";
import type { Logger } from "../runtime/logger.js";
import type { Egress } from "./egress.js";
import type { DaemonEventSink, DaemonEventSource, SvcEvent } from "./events.js";
import type { RouteRegistry } from "./http.js";
import type { ToolRegistry } from "./tools.js";
import type { SessionHost } from "./sessions.js";
import type { HeldSecrets } from "./redaction.js";
import type { Leadership, TeamDatabase, TeamJobs } from "./team.js";

export type { Clock, Random, Sleep, Logger };

/** A sentinel as plugins see it: the stored spec (targets already in their stored form). */
export interface SentinelView {
  id: string;
  status: string;
  createdAt: number;
  spec: {
    match: Array<{ subject: string; types?: string[] }>;
    until: { kind: "subject_terminal" } | { kind: "at"; ms: number } | { kind: "count"; n: number } | { kind: "never" };
    target: { kind: string } & Record<string, unknown>;
    provider?: string;
    group?: string;
    label?: string;
  };
}

/** What the sentinel engine offers providers and targets. */
export interface SentinelIngress {
  /**
   * Hands events from a provider to the engine: matching, dedup, expiry and delivery.
   * Resolves once every matched event is durably accepted by its target.
   */
  ingest(provider: string, events: SvcEvent[]): Promise<IngestResult>;
  /** The provider reports that `subject` reached a terminal state (ends `until: subject_terminal`). */
  subjectTerminal(provider: string, subject: string): Promise<void>;
  /** A target that acked `deferred` marks the event seen once its delivery is terminal. */
  markSeen(sentinelId: string, eventId: string): Promise<void>;
  /** The sentinels currently active (not expired), optionally for one provider. */
  active(provider?: string): SentinelView[];
  get(sentinelId: string): SentinelView | undefined;
  /** Checks expiry now (delivery dispatch calls this); true when the sentinel is expired or gone. */
  isExpiredNow(sentinelId: string): Promise<boolean>;
  /**
   * Replaces the stored target of a sentinel under the store's lock (a target plugin changing
   * it after creation, e.g. webhook secret rotation). `mutate` returns the new stored target.
   */
  updateStoredTarget(
    sentinelId: string,
    mutate: (stored: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>,
  ): Promise<SentinelView>;
}

export interface IngestResult {
  accepted: number;
  matched: Array<{
    sentinelId: string;
    eventId: string;
    outcome: "delivered" | "duplicate" | "expired" | "failed";
    error?: string;
  }>;
}

/** Small secret store under `$SVC_HOME/credentials.json` (mode 0600); values are never shown back. */
export interface CredentialStore {
  get(namespace: string, key: string): Promise<string | undefined>;
  set(namespace: string, key: string, value: string): Promise<void>;
  delete(namespace: string, key: string): Promise<void>;
  has(namespace: string, key: string): Promise<boolean>;
}

/** Services the host offers plugins by name (declared dependencies, as Backstage does). */
export interface HostServices {
  sentinels: SentinelIngress;
  routes: RouteRegistry;
  tools: ToolRegistry;
  credentials: CredentialStore;
  events: DaemonEventSink;
  /** Hears the daemon's events (what `/events` streams), read-only; the daemon offers it, not the CLI's verbs. */
  daemonEvents: DaemonEventSource;
  sessions: SessionHost;
  /** Outbound HTTPS through the host's SSRF gate (`webhooks.allowSubnets` applied); the host closes it. */
  egress: Egress;
  /** Where a plugin that keeps secrets of its own registers them, so no redaction lets them out. */
  heldSecrets: HeldSecrets;
  /** Roles one daemon of the team holds at a time (a poller); always held outside team mode. */
  leadership: Leadership;
  /** Team mode only (`store.url` is `postgres://…`): the shared database (see ./team.ts). */
  teamDatabase: TeamDatabase;
  /** Team mode only: the job queue on the shared database. */
  teamJobs: TeamJobs;
  [name: string]: unknown;
}

/**
 * What a plugin receives at setup. Plugins never import the host's DI container: everything
 * they may use is here.
 */
export interface PluginContext {
  readonly type: "adapter" | "provider" | "target";
  readonly kind: string;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly random: Random;
  readonly sleep: Sleep;
  /** `$SVC_HOME`. */
  readonly home: string;
  /** A folder of the plugin's own under `$SVC_HOME/plugins/<type>-<kind>/` (created on first use). */
  readonly storageDir: string;
  /** The effective configuration, read-only, always the latest good one. */
  config(): Readonly<Record<string, any>>;
  /** A host service by name; throws a clear error when the host does not offer it. */
  service<K extends keyof HostServices & string>(name: K): HostServices[K];
  /** True when the host offers the named service (the CLI offers fewer than the daemon). */
  hasService(name: string): boolean;
}
