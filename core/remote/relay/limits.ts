/**
 * Every bound the relay keeps, with its default. A relay is a public server: each buffer, queue,
 * frame, connection count and idle time is capped; connections are capped per client address
 * too, joins are rate-limited per address, and some connections are kept for tunnels.
 */
export interface RelayLimits {
  /** Largest rendezvous frame (ciphertext) accepted; larger closes the connection (1009). */
  maxFrameBytes: number;
  /** Frames held for an end that has not joined yet, per end, by count and by bytes. */
  maxQueueFrames: number;
  maxQueueBytes: number;
  /** A receiver this far behind (socket buffer) is a slow consumer: its channel is closed. */
  maxBufferedBytes: number;
  /** Open WebSocket connections, all kinds together; more are answered 503. */
  maxConnections: number;
  /** Of those, kept for tunnels whose daemon presented a valid token: channels cannot take them. */
  reservedHostConnections: number;
  /** Channel connections from one client address (an IPv6 /64); more are answered 429. */
  maxConnectionsPerAddress: number;
  /** A connection that sends nothing and answers no ping for this long is closed. */
  idleMs: number;
  /** New offers (`role=offer` channels) per client address per minute; more are answered 429. */
  offersPerMinute: number;
  /** Daemon joins of a pairing's channel (`role=host`) per client address per minute. */
  hostJoinsPerMinute: number;
  /** Peer joins (`role=peer`: accepting an offer, a paired end's link) per client address per minute. */
  peerJoinsPerMinute: number;
  /** Public requests waiting on one tunnel; more are answered 503. */
  maxTunnelInFlight: number;
  /** A tunnelled request the daemon has not answered in this long is answered 504. */
  tunnelTimeoutMs: number;
  /** Request and response bodies through a tunnel. */
  maxTunnelBodyBytes: number;
}

export const DEFAULT_LIMITS: RelayLimits = {
  maxFrameBytes: 256 * 1024,
  maxQueueFrames: 64,
  maxQueueBytes: 1024 * 1024,
  maxBufferedBytes: 4 * 1024 * 1024,
  maxConnections: 1000,
  reservedHostConnections: 32,
  maxConnectionsPerAddress: 50,
  idleMs: 120_000,
  offersPerMinute: 30,
  hostJoinsPerMinute: 60,
  peerJoinsPerMinute: 60,
  maxTunnelInFlight: 64,
  tunnelTimeoutMs: 30_000,
  maxTunnelBodyBytes: 1024 * 1024,
};

/** Bounds that may be 0 (every other one is at least 1). */
export const ZERO_ALLOWED: ReadonlySet<keyof RelayLimits> = new Set(["reservedHostConnections"]);

/**
 * The limits a relay runs with: `given` over the defaults. The two connection shares follow
 * `maxConnections` unless given: one address may hold 5 % of it (at least 1), and the tunnels'
 * reserve is 32 or a quarter of it, whichever is less. Throws when the given bounds contradict.
 */
export function resolveLimits(given: Partial<RelayLimits> = {}): RelayLimits {
  const max = given.maxConnections ?? DEFAULT_LIMITS.maxConnections;
  const limits: RelayLimits = {
    ...DEFAULT_LIMITS,
    maxConnectionsPerAddress: Math.max(1, Math.round(max * 0.05)),
    reservedHostConnections: Math.min(DEFAULT_LIMITS.reservedHostConnections, Math.floor(max / 4)),
    ...given,
  };
  if (limits.reservedHostConnections >= limits.maxConnections) {
    throw new Error(
      `reservedHostConnections (${limits.reservedHostConnections}) must be less than maxConnections (${limits.maxConnections}): channels need at least one connection`,
    );
  }
  if (limits.maxConnectionsPerAddress > limits.maxConnections) {
    throw new Error(
      `maxConnectionsPerAddress (${limits.maxConnectionsPerAddress}) cannot exceed maxConnections (${limits.maxConnections})`,
    );
  }
  return limits;
}

/** A sliding one-minute window of event times per key (client address), itself bounded. */
export class RateLimiter {
  private readonly hits = new Map<string, number[]>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number,
    private readonly maxKeys = 10_000,
  ) {}

  /** Records a hit for `key`; false when the key is over its limit (the hit is not recorded). */
  take(key: string): boolean {
    const t = this.now();
    const list = (this.hits.get(key) ?? []).filter((x) => t - x < 60_000);
    if (list.length >= this.perMinute) {
      this.hits.set(key, list);
      return false;
    }
    list.push(t);
    if (!this.hits.has(key) && this.hits.size >= this.maxKeys) {
      const oldest = this.hits.keys().next().value;
      if (oldest !== undefined) this.hits.delete(oldest);
    }
    this.hits.set(key, list);
    return true;
  }
}
