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
