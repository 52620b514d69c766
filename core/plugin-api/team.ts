/**
 * Team mode, as plugins see it: several daemons share one PostgreSQL (`store.url`). A plugin
 * that keeps durable records of its own (the webhook target: its outbox and its secrets) asks
 * for the host services below, present only in team mode (`ctx.hasService("teamDatabase")`),
 * and keeps its files otherwise. As Backstage's database service does, each plugin owns its
 * tables and runs its own migrations through {@link TeamDatabase.migrate}; the connection, the
 * team's encryption key and the job queue stay the host's.
 */

/** Something SQL can be sent to: the pool, or one transaction. */
export interface TeamSql {
  /** Runs one statement with `$1…` parameters. Errors are SvcErrors (`unavailable` while the database is unreachable). */
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
  ): Promise<{ rows: R[]; rowCount: number }>;
}

/** The team's PostgreSQL database (host service `teamDatabase`). */
export interface TeamDatabase extends TeamSql {
  /** This daemon's id in the team, unique per process start (`<host>-<pid>-<ulid>`). */
  readonly daemonId: string;
  /**
   * Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. A
   * serialization failure or deadlock is retried (at most 5 times) with `fn` called again.
   */
  tx<T>(fn: (sql: TeamSql) => Promise<T>): Promise<T>;
  /**
   * Applies `owner`'s migrations in order, each once, under a team-wide lock (two daemons starting
   * together migrate once). `migrations[i]` is version i + 1. A database whose `owner` version is
   * newer than `migrations.length` is refused (`store_schema_newer`): an older svc never writes
   * to a schema it does not know.
   */
  migrate(owner: string, migrations: readonly string[]): Promise<void>;
  /**
   * LISTENs on `channel` on a connection of its own, re-LISTENing after a reconnect; resolves to a
   * stop function. After a reconnect `onPayload("*")` is called once: notifications may have been
   * missed meanwhile, so the listener reloads what it caches.
   */
  listen(channel: string, onPayload: (payload: string) => void): Promise<() => Promise<void>>;
  /** Encrypts a secret with the team's key (AES-256-GCM): what is stored in the database. */
  seal(plaintext: string): Buffer;
  /** Decrypts what {@link seal} made; throws `store_key_mismatch` when another key sealed it. */
  unseal(sealed: Buffer): string;
}

/** A job as its handler sees it. */
export interface TeamJob {
  id: string;
  /** 1 on the first run of this job; more when a daemon died holding it and another runs it again. */
  attempts: number;
}

/** The team's job queue on PostgreSQL (host service `teamJobs`): each job runs on one daemon at a time. */
export interface TeamJobs {
  /**
   * Adds a job inside the caller's transaction: it exists only if that transaction commits.
   * `key`: at most one waiting job per key (a second add replaces the waiting one's payload and
   * time). `runAt`: not before then.
   */
  add(sql: TeamSql, job: { task: string; payload: Record<string, unknown>; key?: string; runAt?: Date }): Promise<void>;
  /**
   * Inside the caller's transaction, the safety net for records that are overdue for their job:
   * a job running now, or waiting and due by `runBy`, is left as it is; one missing, given up (it
   * failed too often) or due later (a retry's backoff after an outage) is added again, due now.
   * Returns the keys it added.
   */
  ensure(
    sql: TeamSql,
    jobs: ReadonlyArray<{ task: string; payload: Record<string, unknown>; key: string; runBy: Date }>,
  ): Promise<string[]>;
  /**
   * Runs this daemon's share of the task's jobs, at most `concurrency` at once. The job is done
   * when `handler` resolves; a throw is logged and the job runs again later. A daemon killed while
   * holding a job has it released (its heartbeat stops) and another daemon runs it. Workers that
   * stop or stall on their own (after a PostgreSQL restart) are replaced, their claims released.
   * Resolves to a stop function: this daemon takes no more of the task's jobs, and the ones
   * running finish.
   */
  work(
    task: string,
    handler: (payload: Record<string, unknown>, job: TeamJob) => Promise<void>,
    options: { concurrency: number },
  ): Promise<() => Promise<void>>;
}

/** A named role that one daemon of the team holds at a time (host service `leadership`). */
export interface Lease {
  /** True while this daemon holds it (always true outside team mode: one daemon is the team). */
  held(): boolean;
  /** Gives it up (another daemon may take it at once). */
  release(): Promise<void>;
}

/** Offered in every mode, so a plugin never branches on it. */
export interface Leadership {
  /**
   * Competes for `name` (e.g. `provider:local-gh`): held by one daemon at a time, renewed while it
   * lives, taken over by another within `ttlMs` (default 15 s) of its death.
   */
  lease(name: string, options?: { ttlMs?: number }): Lease;
}

/**
 * What a target keeps of its own, moved between stores by `svc store migrate` (file home ⇄
 * PostgreSQL). `export` reads the store the target was set up on (files, or `teamDatabase`),
 * `import` writes into the one it is set up on; the records' shape is the target's business.
 * Importing the same records twice changes nothing more.
 */
export interface StoreTransfer {
  export(sentinelIds: ReadonlySet<string>): Promise<{ records: unknown[]; summary: Record<string, number> }>;
  import(records: unknown[]): Promise<Record<string, number>>;
}
