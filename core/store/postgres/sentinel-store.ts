/**
 * The sentinel records in the team's PostgreSQL (`svc_sentinels`, one jsonb record per id),
 * shared by every daemon of the team. Reads are served from memory, loaded at {@link load}. A
 * write is one transaction (an update locks the row: SELECT … FOR UPDATE, mutate, UPDATE, so two
 * daemons' changes to one sentinel both hold) that ends with `NOTIFY svc_sentinels, '<id>'`.
 *
 * Every daemon LISTENs on that channel and re-reads the named row; a change it did not make
 * itself (the row's `xmin`, its writing transaction, differs from the one cached) is applied to
 * the cache and handed to {@link onRemoteChange} (the engine indexes, watches or unwatches it).
 * After the listener reconnects (payload `*`: notifications may have been missed) every row is
 * re-read. Notifications are handled one at a time, in order; a re-read that a write of this
 * daemon overtook is read again, so the cache never goes back to an older record.
 */
import { SvcError } from "../../errors.js";
import type { TeamDatabase, TeamSql } from "../../plugin-api/team.js";
import type { Logger } from "../../runtime/logger.js";
import type { RemoteSentinelChange, SentinelRecordStore } from "../../sentinels/record-store.js";
import type { SentinelRecord } from "../../sentinels/service.js";
import { SENTINELS_CHANNEL } from "./core-schema.js";

interface Cached {
  rec: SentinelRecord;
  /** The row's xmin: which transaction wrote this version. */
  version: string;
}

type Row = {
  id: string;
  record: SentinelRecord;
  version: string;
};

const notify = (sql: TeamSql, id: string) => sql.query("SELECT pg_notify($1, $2)", [SENTINELS_CHANNEL, id]);

export class PostgresSentinelStore implements SentinelRecordStore {
  private readonly records = new Map<string, Cached>();
  /** Bumped by each write of this daemon, so a re-read that began before it knows to read again. */
  private readonly writes = new Map<string, number>();
  private listeners: RemoteSentinelChange[] = [];
  /** This daemon's writes in progress, by sentinel id. */
  private readonly inFlight = new Map<string, Set<Promise<void>>>();
  private unlisten?: () => Promise<void>;
  /** The notifications being handled, one after the other. */
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly db: TeamDatabase,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<SentinelRecord[]> {
    // LISTEN first: a change committed while the rows are read is then re-read after.
    this.unlisten ??= await this.db.listen(SENTINELS_CHANNEL, (payload) => this.heard(payload));
    const rows = await this.readAll();
    this.records.clear();
    for (const r of rows) this.records.set(r.id, { rec: r.record, version: r.version });
    return this.all();
  }

  all(): SentinelRecord[] {
    return [...this.records.values()].map((c) => c.rec);
  }

  get(id: string): SentinelRecord | undefined {
    return this.records.get(id)?.rec;
  }

  async insert(rec: SentinelRecord): Promise<void> {
    const version = await this.writing(rec.id, () =>
      this.db.tx(async (sql) => {
        const { rows } = await sql.query<{ version: string }>(
          `INSERT INTO svc_sentinels (id, record) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING xmin::text AS version`,
          [rec.id, rec],
        );
        if (!rows[0]) throw new SvcError("conflict", `sentinel ${rec.id} already exists`);
        await notify(sql, rec.id);
        return rows[0].version;
      }),
    );
    this.wrote(rec.id, { rec, version });
  }

  async update(
    id: string,
    mutate: (rec: SentinelRecord) => SentinelRecord | Promise<SentinelRecord>,
  ): Promise<SentinelRecord> {
    const out = await this.writing(id, () =>
      this.db.tx(async (sql) => {
        const { rows } = await sql.query<{ record: SentinelRecord }>(
          "SELECT record FROM svc_sentinels WHERE id = $1 FOR UPDATE",
          [id],
        );
        if (!rows[0]) throw new SvcError("not_found", `no sentinel ${id}`);
        const rec = await mutate(rows[0].record);
        const updated = await sql.query<{ version: string }>(
          "UPDATE svc_sentinels SET record = $2, updated_at = now() WHERE id = $1 RETURNING xmin::text AS version",
          [id, rec],
        );
        await notify(sql, id);
        return { rec, version: updated.rows[0]!.version };
      }),
    );
    this.wrote(id, out);
    return out.rec;
  }

  async remove(id: string): Promise<boolean> {
    const found = await this.writing(id, () =>
      this.db.tx(async (sql) => {
        const { rowCount } = await sql.query("DELETE FROM svc_sentinels WHERE id = $1", [id]);
        if (rowCount > 0) await notify(sql, id);
        return rowCount > 0;
      }),
    );
    this.wrote(id, undefined);
    return found;
  }

  onRemoteChange(fn: RemoteSentinelChange): void {
    this.listeners.push(fn);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.unlisten?.();
    this.unlisten = undefined;
    await this.queue;
  }

  /**
   * Runs one of this daemon's writes of `id`, known as in flight until it is in the cache: its
   * own notification can arrive (and be re-read) before its COMMIT's answer does.
   */
  private async writing<T>(id: string, write: () => Promise<T>): Promise<T> {
    const p = write();
    const done = p.then(
      () => undefined,
      () => undefined,
    );
    const all = this.inFlight.get(id) ?? new Set<Promise<void>>();
    all.add(done);
    this.inFlight.set(id, all);
    try {
      return await p;
    } finally {
      all.delete(done);
      if (all.size === 0) this.inFlight.delete(id);
    }
  }

  /** The cache after a write of this daemon (no listener hears of it: it is not remote). */
  private wrote(id: string, now: Cached | undefined): void {
    this.writes.set(id, (this.writes.get(id) ?? 0) + 1);
    if (now) this.records.set(id, now);
    else this.records.delete(id);
  }

  private heard(payload: string): void {
    this.queue = this.queue
      .then(() => (this.closed ? undefined : payload === "*" ? this.refreshAll() : this.refresh(payload)))
      .catch((err: Error) =>
        // The store is unreachable: the listener reconnects once it is back, and re-reads all then.
        this.logger.warn("team store: a sentinel change could not be read", { sentinel: payload, error: err.message }),
      );
  }

  /** Re-reads one row until no write of this daemon overtook the read or is in flight, then applies it. */
  private async refresh(id: string): Promise<void> {
    for (;;) {
      const busy = this.inFlight.get(id);
      if (busy) {
        await Promise.all(busy);
        continue;
      }
      const before = this.writes.get(id) ?? 0;
      const { rows } = await this.db.query<Row>(
        "SELECT id, record, xmin::text AS version FROM svc_sentinels WHERE id = $1",
        [id],
      );
      if ((this.writes.get(id) ?? 0) === before && !this.inFlight.has(id)) return this.apply(id, rows[0]);
    }
  }

  private async refreshAll(): Promise<void> {
    const writes = new Map(this.writes);
    const rows = new Map((await this.readAll()).map((r) => [r.id, r]));
    for (const id of new Set([...this.records.keys(), ...rows.keys()])) {
      if ((this.writes.get(id) ?? 0) === (writes.get(id) ?? 0) && !this.inFlight.has(id))
        await this.apply(id, rows.get(id));
      else await this.refresh(id);
    }
  }

  private async apply(id: string, row: Row | undefined): Promise<void> {
    const cached = this.records.get(id);
    if (cached?.version === row?.version) return;
    if (row) this.records.set(id, { rec: row.record, version: row.version });
    else this.records.delete(id);
    for (const fn of this.listeners) {
      await fn(id, cached?.rec, row?.record).catch((err: Error) =>
        this.logger.warn("a sentinel changed by another daemon could not be applied", {
          sentinel: id,
          error: err.message,
        }),
      );
    }
  }

  private async readAll(): Promise<Row[]> {
    return (await this.db.query<Row>("SELECT id, record, xmin::text AS version FROM svc_sentinels")).rows;
  }
}
