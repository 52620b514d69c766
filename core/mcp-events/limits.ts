/** Every number of the MCP events extension (docs/mcp-events.md gives them). */
export const MCP_EVENTS_LIMITS = {
  /** `events/list` page size. */
  listPageSize: 50,
  /** Webhook subscription TTL: granted when `ttlMs` is omitted. */
  ttlDefaultMs: 3_600_000,
  /** Shorter suggestions are clamped up to this (the sketch's refresh-storm floor). */
  ttlMinMs: 60_000,
  /** Longer finite suggestions are clamped down to this; `ttlMs: null` asks for no expiry. */
  ttlMaxMs: 7 * 24 * 3_600_000,
  /** Webhook subscriptions per principal key. */
  subscriptionsPerPrincipal: 100,
  /** Poll leases per principal key. */
  pollLeasesPerPrincipal: 100,
  /** Events a poll lease keeps (the oldest go first). */
  pollBufferEvents: 1_000,
  /** How long a poll lease keeps an event. */
  pollBufferMs: 24 * 3_600_000,
  /** A poll lease lapses this long after its last poll. */
  pollLeaseIdleMs: 10 * 60_000,
  /** `maxEvents` when omitted, and its ceiling. */
  pollMaxEventsDefault: 100,
  pollMaxEventsMax: 1_000,
  /** `timeoutMs` ceiling (a long poll answers as soon as an event arrives). */
  pollTimeoutMaxMs: 30_000,
  /** `nextPollMs` of every poll answer. */
  nextPollMs: 5_000,
  /** How often lapsed subscriptions and idle poll leases are swept. */
  sweepEveryMs: 60_000,
} as const;
