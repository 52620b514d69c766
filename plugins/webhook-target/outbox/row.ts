/** An outbox row as SPEC.md "OutboxRow" gives it, plus the bookkeeping the state table needs. */
export type RowStatus = "pending" | "delivered" | "dead";

/**
 * SPEC.md "Outbox dead reasons", plus `age_out` for the 7-day rule and `suspended_backlog` for an
 * event past what a suspended sentinel may keep waiting (endpoint health; replayable).
 */
export type DeadReason =
  | "delivered_rejected"
  | "sentinel_expired"
  | "sentinel_removed"
  | "age_out"
  | "suspended_backlog";

export interface DeliveryState {
  attempts: number;
  /** The last failure, naming the callback host only (never its path, query or a secret). */
  lastError: string | null;
  /** Epoch ms of the last attempt. */
  lastAt: number | null;
}

/**
 * Where the exact serialized body lives: inline in the journal's `add` record until the next
 * compaction, then in a segment file written once (at `offset`); checked on every read. A ref
 * without `offset` names a whole file (the layout before segments, and a body not yet placed).
 */
export interface BodyRef {
  /** File name inside the bodies folder. */
  file: string;
  /** Byte offset of the body inside its segment file. */
  offset?: number;
  length: number;
  sha256: string;
}

export interface OutboxRow {
  sentinelId: string;
  requestId: string;
  eventId: string;
  bodyBytes: BodyRef;
  /** Always null in v1 (SPEC.md). A replay resends the row's stored bytes; it needs no cursor. */
  cursor: null;
  deliveryState: DeliveryState;
  status: RowStatus;
  deadReason?: DeadReason;
  createdAt: number;
  /** Epoch ms of the last status change (delivery time for delivered rows). */
  updatedAt: number;
  /** The engine was told (markSeen) that the event's delivery is terminal. */
  seen: boolean;
  /** How many times the row was sent again by a replay (`svc sentinel replay`), and when last. */
  replays?: number;
  replayedAt?: number;
}

/** One line of the state journal. */
export type JournalRecord =
  | {
      seq: number;
      op: "add";
      row: OutboxRow /** The exact body, base64, until compaction moves it to its file. */;
      body?: string;
    }
  | {
      seq: number;
      op: "update";
      requestId: string;
      status: RowStatus;
      deliveryState: DeliveryState;
      deadReason?: DeadReason;
      at: number;
    }
  | { seq: number; op: "seen"; requestId: string }
  | { seq: number; op: "remove"; requestId: string }
  /** A terminal row back to pending for a replay: attempts reset, same stored body and webhook-id. */
  | { seq: number; op: "replay"; requestId: string; at: number }
  /**
   * Takes over the engine's old per-sentinel dedup record of a sentinel (files of svc before 0.21):
   * its event ids become part of the sentinel's trace, and its count of accepted events is kept.
   */
  | { seq: number; op: "adopt"; sentinelId: string; eventIds: string[]; accepted: number }
  /** The sentinel was removed: its trace of removed rows is dropped. */
  | { seq: number; op: "forget"; sentinelId: string };

export type NewRecord = JournalRecord extends infer R ? (R extends JournalRecord ? Omit<R, "seq"> : never) : never;

/**
 * What stays of a sentinel's rows once they are removed (reaped 24 hours after delivery, or
 * evicted at the cap): how many there were, and the ids of the last {@link TRACE_IDS} of them, so
 * a re-pushed id is still known as a duplicate and `until: count` still counts it.
 */
export interface SentinelTrace {
  /** Removed rows (plus the count adopted from an old dedup record). */
  removed: number;
  /** Event ids of the last removed rows, oldest first. */
  eventIds: string[];
}

/** Event ids a sentinel's trace keeps (SPEC.md: dedup memory is the last 1000 event ids per sentinel). */
export const TRACE_IDS = 1000;

export const rowKey = (sentinelId: string, eventId: string): string => `${sentinelId}\u0000${eventId}`;

export const isTerminal = (row: Pick<OutboxRow, "status">): boolean => row.status !== "pending";
