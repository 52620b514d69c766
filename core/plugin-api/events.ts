/**
 * A sentinel event: CloudEvents-like. `id` is stable for the same occurrence and never contains
 * a `.` (it becomes the `webhook-id` of a delivery); `subjects` is the hierarchy, broadest first,
 * e.g. `["github:acme/api", "github:acme/api#42"]`; `type` is `<scheme>.<object>.<action>`.
 */
export interface SvcEvent {
  id: string;
  type: string;
  subjects: string[];
  /** ISO-8601 time of the occurrence. */
  time?: string;
  data?: unknown;
}

/** A daemon event as streamed on `/events` (matched events, `ended:expired`, `session:stalled`, …). */
export interface DaemonEvent {
  type: string;
  data?: unknown;
}

export interface DaemonEventSink {
  emit(type: string, data?: unknown): void;
}

/** A daemon event as a listener hears it: stamped by the bus. */
export interface HeardDaemonEvent extends DaemonEvent {
  /** Increasing within the daemon's life (restarts at 1 with the daemon): the `/events` SSE id. */
  seq: number;
  /** Epoch ms it was emitted. */
  at: number;
}

/**
 * The daemon's events, read-only (host service "daemonEvents"): a listener hears, as they are
 * emitted, those whose type starts with `prefix` (e.g. `session:`), each a copy of its own as
 * `/events` shows it (likely secrets redacted). A listener that throws is logged and kept; it
 * never disturbs the emitter.
 */
export interface DaemonEventSource {
  /** Returns the function that stops listening. */
  subscribe(prefix: string, listener: (event: HeardDaemonEvent) => void): () => void;
}
