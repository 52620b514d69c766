import type { DaemonEvent, DaemonEventSink } from "../plugin-api/events.js";

export interface StampedEvent extends DaemonEvent {
  /** Monotonic id within this daemon's life, used as the SSE `id` for Last-Event-ID resume. */
  seq: number;
  at: number;
}

/**
 * In-process bus of daemon events (what `/events` streams). Keeps a bounded backlog so a client
 * reconnecting with Last-Event-ID gets what it missed.
 */
export class DaemonEventBus implements DaemonEventSink {
  private seq = 0;
  private readonly backlog: StampedEvent[] = [];
  private readonly listeners = new Set<(e: StampedEvent) => void>();

  constructor(
    private readonly backlogSize = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  emit(type: string, data?: unknown): void {
    const event: StampedEvent = { seq: ++this.seq, at: this.now(), type, ...(data === undefined ? {} : { data }) };
    this.backlog.push(event);
    if (this.backlog.length > this.backlogSize) this.backlog.shift();
    for (const l of this.listeners) l(event);
  }

  /** Events after `seq` still in the backlog. */
  since(seq: number): StampedEvent[] {
    return this.backlog.filter((e) => e.seq > seq);
  }

  subscribe(listener: (e: StampedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
