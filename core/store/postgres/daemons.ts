/**
 * The team's roll of daemons (`svc_daemons`): each daemon upserts its row at start and heartbeats
 * it (`heartbeat_at = now()`, the database's clock) every 2 s, and deletes it at a clean stop. The
 * daemon holding the lease `team:daemon-sweep` finds the daemons whose heartbeat is older than
 * 10 s, deletes their rows and releases their job claims in the same transaction: every
 * graphile-worker worker of a daemon has an id starting with `<daemon id>/`, so the claims are
 * the jobs and queues whose `locked_by` starts so, unlocked with graphile's own
 * `force_unlock_workers` and run again by a live daemon.
 */
import { hostname } from "node:os";
import type { Lease, TeamDatabase } from "../../plugin-api/team.js";
import type { Logger } from "../../runtime/logger.js";

export const HEARTBEAT_MS = 2_000;
export const DEAD_AFTER_MS = 10_000;

export interface DaemonRollOptions {
  db: Pick<TeamDatabase, "daemonId" | "query" | "tx">;
  /** The lease `team:daemon-sweep`: only its holder sweeps. */
  sweepLease: Lease;
  logger: Logger;
  version: string;
  heartbeatMs?: number;
  deadAfterMs?: number;
}

/** A dead daemon whose row the sweep deleted, and how many jobs it held that were released. */
export interface SweptDaemon {
  daemonId: string;
  jobsReleased: number;
}

const UPSERT = `
INSERT INTO svc_daemons (id, host, pid, svc_version) VALUES ($1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`;

/** The workers (and their job counts) of a daemon, by `locked_by` prefix. */
const CLAIMS = `
SELECT w.locked_by, (SELECT count(*) FROM graphile_worker._private_jobs j WHERE j.locked_by = w.locked_by)::int AS jobs
FROM (SELECT locked_by FROM graphile_worker._private_jobs WHERE starts_with(locked_by, $1)
      UNION SELECT locked_by FROM graphile_worker._private_job_queues WHERE starts_with(locked_by, $1)) w`;

export class DaemonRoll {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private stopped = false;
  /** Heartbeats are failing (logged once when they start failing and once when they are back). */
  private failing = false;
  private readonly heartbeatMs: number;
  private readonly deadAfterMs: number;

  constructor(private readonly opts: DaemonRollOptions) {
    this.heartbeatMs = opts.heartbeatMs ?? HEARTBEAT_MS;
    this.deadAfterMs = opts.deadAfterMs ?? DEAD_AFTER_MS;
  }

  /** Writes this daemon's row (a failure here fails the start: the database was reachable a moment ago), then beats. */
  async start(): Promise<void> {
    await this.upsert();
    this.schedule();
  }

  /** Stops beating and deletes this daemon's row (a clean stop: nothing of its to release). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.beating;
    await this.opts.db
      .query("DELETE FROM svc_daemons WHERE id = $1", [this.opts.db.daemonId])
      .catch((err: Error) => this.opts.logger.warn("team daemon row not deleted", { error: err.message }));
  }

  /**
   * Deletes the rows of daemons silent for longer than deadAfterMs and releases their job claims,
   * in one transaction (a sweep cut short leaves both for the next one).
   */
  async sweep(): Promise<SweptDaemon[]> {
    const swept = await this.opts.db.tx(async (sql) => {
      const dead = await sql.query<{ id: string }>(
        "DELETE FROM svc_daemons WHERE heartbeat_at < now() - $1 * interval '1 millisecond' RETURNING id",
        [this.deadAfterMs],
      );
      if (!dead.rows.length) return [];
      const queue = await sql.query<{ t: string | null }>(
        "SELECT to_regclass('graphile_worker._private_jobs')::text AS t",
      );
      const out: SweptDaemon[] = [];
      for (const { id } of dead.rows) {
        let jobsReleased = 0;
        if (queue.rows[0]?.t) {
          const claims = await sql.query<{ locked_by: string; jobs: number }>(CLAIMS, [`${id}/`]);
          if (claims.rows.length) {
            await sql.query("SELECT graphile_worker.force_unlock_workers($1::text[])", [
              claims.rows.map((r) => r.locked_by),
            ]);
          }
          jobsReleased = claims.rows.reduce((n, r) => n + r.jobs, 0);
        }
        out.push({ daemonId: id, jobsReleased });
      }
      return out;
    });
    for (const d of swept) {
      this.opts.logger.info("dead team daemon's job claims released", {
        daemon: d.daemonId,
        jobsReleased: d.jobsReleased,
      });
    }
    return swept;
  }

  private async upsert(): Promise<void> {
    await this.opts.db.query(UPSERT, [this.opts.db.daemonId, hostname(), process.pid, this.opts.version]);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.beating = this.beat().finally(() => this.schedule());
    }, this.heartbeatMs);
    this.timer.unref();
  }

  /** One heartbeat (re-creating the row if a sweep deleted it while the database was out of reach), and a sweep when ours. */
  private async beat(): Promise<void> {
    try {
      await this.upsert();
      if (this.failing) this.opts.logger.info("team daemon heartbeat back");
      this.failing = false;
    } catch (err) {
      if (!this.failing) this.opts.logger.warn("team daemon heartbeat failed", { error: (err as Error).message });
      this.failing = true;
      return;
    }
    if (!this.opts.sweepLease.held() || this.stopped) return;
    await this.sweep().catch((err: Error) =>
      this.opts.logger.warn("dead team daemon sweep failed", { error: err.message }),
    );
  }
}
