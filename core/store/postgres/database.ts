/**
 * The team's PostgreSQL database ({@link TeamDatabase}): one `pg` pool per daemon, transactions
 * with retry on serialization failures, versioned migrations per owner under a team-wide
 * advisory lock, LISTEN on connections of their own, and the team key's seal/unseal.
 * Loaded only in team mode (core/store/module.ts imports it on first use).
 */
import pg from "pg";
import type { TeamDatabase, TeamSql } from "../../plugin-api/team.js";
import type { Logger } from "../../runtime/logger.js";
import { storeError } from "./errors.js";
import { runMigrations } from "./migrations.js";
import { sealSecret, unsealSecret } from "./secret-box.js";

export interface TeamDatabaseOptions {
  url: string;
  /** The team's 32-byte AES-256-GCM key (core/store/postgres/secret-key.ts loads it). */
  key: Buffer;
  daemonId: string;
  logger: Logger;
  /** Pool size (default 10). */
  max?: number;
}

const RETRYABLE = new Set(["40001", "40P01"]);

export interface OpenTeamDatabase extends TeamDatabase {
  /** Ends the pool and every listener. */
  close(): Promise<void>;
}

/** Opens the pool and checks one connection (a wrong URL, password or server fails here, clearly). */
export async function openTeamDatabase(opts: TeamDatabaseOptions): Promise<OpenTeamDatabase> {
  const pool = new pg.Pool({
    connectionString: opts.url,
    max: opts.max ?? 10,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
    application_name: `svc ${opts.daemonId}`,
  });
  // An idle client's error (the server restarting) must not crash the daemon: the pool drops it.
  pool.on("error", (err) => opts.logger.warn("team store connection lost", { error: err.message }));
  // Every client, checked out or not, from its first moment: a server going away between the pool
  // handing a client over and its user listening must not be an uncaught 'error' either (the
  // statement in flight fails instead, and the pool drops the client).
  pool.on("connect", (client) => client.on("error", () => undefined));
  const listeners = new Set<() => Promise<void>>();

  const query: TeamSql["query"] = async (text, values) => {
    try {
      const r = await pool.query(text, values as unknown[] | undefined);
      return { rows: r.rows, rowCount: r.rowCount ?? 0 };
    } catch (err) {
      throw storeError(err, opts.url);
    }
  };

  const db: OpenTeamDatabase = {
    daemonId: opts.daemonId,
    query,
    async tx(fn) {
      for (let attempt = 1; ; attempt++) {
        let client: pg.PoolClient;
        try {
          client = await pool.connect();
        } catch (err) {
          throw storeError(err, opts.url);
        }
        const sql: TeamSql = {
          async query(text, values) {
            try {
              const r = await client.query(text, values as unknown[] | undefined);
              return { rows: r.rows, rowCount: r.rowCount ?? 0 };
            } catch (err) {
              throw storeError(err, opts.url);
            }
          },
        };
        let broken = false;
        // A checked-out client has no listener of the pool's: the server going away between two
        // statements would be an uncaught 'error' (a crash). The next statement fails instead.
        const onLost = (err: Error) => {
          broken = true;
          opts.logger.warn("team store connection lost in a transaction", { error: err.message });
        };
        client.on("error", onLost);
        try {
          await client.query("BEGIN");
          const out = await fn(sql);
          await client.query("COMMIT");
          return out;
        } catch (err) {
          await client.query("ROLLBACK").catch(() => {
            broken = true;
          });
          const code =
            (err as { cause?: { code?: string }; code?: string }).cause?.code ?? (err as { code?: string }).code;
          if (attempt < 5 && code && RETRYABLE.has(code)) continue;
          throw storeError(err, opts.url);
        } finally {
          client.off("error", onLost);
          client.release(broken);
        }
      }
    },
    migrate: (owner, migrations) => runMigrations(db, owner, migrations),
    async listen(channel, onPayload) {
      let stopped = false;
      let client: pg.Client | undefined;
      let delay = 100;
      const connect = async (again: boolean): Promise<void> => {
        while (!stopped) {
          const c = new pg.Client({ connectionString: opts.url, connectionTimeoutMillis: 5_000 });
          c.on("notification", (m) => onPayload(m.payload ?? ""));
          c.on("error", () => undefined);
          c.on("end", () => {
            if (!stopped && client === c) void connect(true);
          });
          try {
            await c.connect();
            await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
            client = c;
            delay = 100;
            if (again) onPayload("*");
            return;
          } catch (err) {
            await c.end().catch(() => undefined);
            if (!again) throw storeError(err, opts.url);
            await new Promise((r) => setTimeout(r, delay).unref());
            delay = Math.min(delay * 2, 5_000);
          }
        }
      };
      await connect(false);
      const stop = async () => {
        stopped = true;
        listeners.delete(stop);
        await client?.end().catch(() => undefined);
      };
      listeners.add(stop);
      return stop;
    },
    seal: (plaintext) => sealSecret(opts.key, plaintext),
    unseal: (sealed) => unsealSecret(opts.key, sealed),
    async close() {
      await Promise.all([...listeners].map((stop) => stop()));
      await pool.end();
    },
  };
  await query("SELECT 1");
  return db;
}
