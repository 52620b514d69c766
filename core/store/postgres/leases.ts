/**
 * The host service `leadership` in team mode: a lease is a row of `svc_leases` (name, holder,
 * expires_at). One statement takes or renews it, on the DATABASE's clock: it succeeds when the
 * row is missing, expired (`expires_at < now()`) or already ours, so no two daemons' clocks are
 * ever compared. The holder renews every ttl/3; the others try as often, and once the row's
 * expiry has passed (the statement tells them how long that is).
 *
 * `held()` is local and conservative: it is true until the last successful renewal's SENDING
 * time + ttl - margin (the database set expires_at later than that), and false as soon as a
 * renewal fails. So a holder cut off from the database stops believing it holds the lease before
 * the row expires and another daemon can take it: two daemons never both believe they hold it.
 */
import type { Leadership, Lease, TeamSql } from "../../plugin-api/team.js";
import type { Logger } from "../../runtime/logger.js";

export const DEFAULT_LEASE_TTL_MS = 15_000;

export interface PostgresLeadershipOptions {
  sql: TeamSql;
  /** Who holds a lease we take: this daemon's id in the team. */
  holder: string;
  logger: Logger;
  /** A monotonic clock in ms for the local deadline (default performance.now: wall-clock jumps do not move it). */
  now?: () => number;
}

/**
 * Takes the lease (a missing or expired row, or ours) and answers whether it is ours now, and
 * otherwise how many ms remain before the current holder's row expires.
 */
const ACQUIRE = `
WITH taken AS (
  INSERT INTO svc_leases (name, holder, expires_at)
  VALUES ($1, $2, now() + $3 * interval '1 millisecond')
  ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
  WHERE svc_leases.expires_at < now() OR svc_leases.holder = EXCLUDED.holder
  RETURNING holder
)
SELECT (SELECT holder FROM taken) AS mine,
       (SELECT ceil(extract(epoch FROM expires_at - now()) * 1000)::float8 FROM svc_leases WHERE name = $1) AS wait_ms`;

const RELEASE = "DELETE FROM svc_leases WHERE name = $1 AND holder = $2";

class PostgresLease implements Lease {
  /** held() is true until then (monotonic ms); 0 = not held. */
  private deadline = 0;
  private timer: NodeJS.Timeout | undefined;
  private released = false;
  /** Attempts in order: a late answer to an older attempt never overrides a newer one. */
  private sent = 0;
  private applied = 0;
  private inFlightSince: number | undefined;
  private inFlight: Promise<unknown> | undefined;
  private readonly margin: number;
  private readonly every: number;

  constructor(
    readonly name: string,
    private readonly ttlMs: number,
    private readonly opts: Required<Pick<PostgresLeadershipOptions, "now">> & PostgresLeadershipOptions,
    private readonly onReleased: (lease: PostgresLease) => void,
  ) {
    this.margin = Math.max(1, Math.floor(ttlMs / 10));
    this.every = Math.max(1, Math.floor(ttlMs / 3));
    this.schedule(0);
  }

  held(): boolean {
    return !this.released && this.deadline > this.opts.now();
  }

  async release(): Promise<void> {
    if (this.released) return;
    const was = this.held();
    this.released = true;
    this.deadline = 0;
    clearTimeout(this.timer);
    this.onReleased(this);
    // An attempt in flight could take the row after the DELETE: let it land first (a hung one: a ttl at most).
    if (this.inFlight) await Promise.race([this.inFlight, new Promise((r) => setTimeout(r, this.ttlMs).unref())]);
    try {
      await this.opts.sql.query(RELEASE, [this.name, this.opts.holder]);
      if (was) this.opts.logger.info("lease released", { lease: this.name });
    } catch (err) {
      // The row expires on its own within ttl.
      this.opts.logger.warn("lease release failed", { lease: this.name, error: (err as Error).message });
    }
  }

  private schedule(ms: number): void {
    if (this.released) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      const p = this.attempt();
      this.inFlight = p;
      void p.finally(() => {
        if (this.inFlight === p) this.inFlight = undefined;
      });
    }, ms);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    const sentAt = this.opts.now();
    // One attempt at a time, unless the one in flight hangs longer than a ttl (a dead connection).
    if (this.inFlightSince !== undefined && sentAt - this.inFlightSince < this.ttlMs) return this.schedule(this.every);
    const seq = ++this.sent;
    this.inFlightSince = sentAt;
    const wasHeld = this.held();
    let next = this.every;
    try {
      const { rows } = await this.opts.sql.query<{ mine: string | null; wait_ms: number | null }>(ACQUIRE, [
        this.name,
        this.opts.holder,
        this.ttlMs,
      ]);
      if (seq < this.applied || this.released) return;
      this.applied = seq;
      const mine = rows[0]?.mine === this.opts.holder;
      this.deadline = mine ? sentAt + this.ttlMs - this.margin : 0;
      // Not ours: try again once the holder's row has expired, or at the usual pace if that is sooner.
      if (!mine && rows[0]?.wait_ms != null) next = Math.min(this.every, Math.max(1, rows[0].wait_ms + 1));
    } catch (err) {
      if (seq < this.applied || this.released) return;
      this.applied = seq;
      this.deadline = 0;
      if (wasHeld) this.opts.logger.warn("lease renewal failed", { lease: this.name, error: (err as Error).message });
    } finally {
      if (seq === this.sent) this.inFlightSince = undefined;
    }
    const isHeld = this.held();
    if (isHeld !== wasHeld) this.opts.logger.info(isHeld ? "lease gained" : "lease lost", { lease: this.name });
    this.schedule(next);
  }
}

export class PostgresLeadership implements Leadership {
  private readonly leases = new Set<PostgresLease>();
  private readonly opts: Required<Pick<PostgresLeadershipOptions, "now">> & PostgresLeadershipOptions;

  constructor(opts: PostgresLeadershipOptions) {
    this.opts = { ...opts, now: opts.now ?? (() => performance.now()) };
  }

  lease(name: string, options: { ttlMs?: number } = {}): Lease {
    const lease = new PostgresLease(name, options.ttlMs ?? DEFAULT_LEASE_TTL_MS, this.opts, (l) =>
      this.leases.delete(l),
    );
    this.leases.add(lease);
    return lease;
  }

  /** Releases every lease still out (daemon stop), so another daemon takes each at once. */
  async close(): Promise<void> {
    await Promise.all([...this.leases].map((l) => l.release()));
  }
}
