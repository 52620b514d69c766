/**
 * Where the sentinel records live, as the engine sees them: `$SVC_HOME/sentinels.json`
 * ({@link SentinelStore}, store.ts) or the team's PostgreSQL (core/store/postgres/sentinel-store.ts).
 * Reads are served from memory; every write is durable when it resolves.
 */
import type { SentinelRecord } from "./service.js";

/** A record changed by another daemon of the team: `before`/`after` are undefined when it was created/removed. */
export type RemoteSentinelChange = (
  id: string,
  before: SentinelRecord | undefined,
  after: SentinelRecord | undefined,
) => Promise<void>;

export interface SentinelRecordStore {
  /** (Re)reads every record into memory and returns them. */
  load(): Promise<SentinelRecord[]>;
  all(): SentinelRecord[];
  get(id: string): SentinelRecord | undefined;
  /** Stores a new record; `conflict` when its id exists. */
  insert(rec: SentinelRecord): Promise<void>;
  /** Applies `mutate` to the stored record, exclusively; throws `not_found`. */
  update(
    id: string,
    mutate: (rec: SentinelRecord) => SentinelRecord | Promise<SentinelRecord>,
  ): Promise<SentinelRecord>;
  /** Removes the record; false when there was none. */
  remove(id: string): Promise<boolean>;
  /** A shared store: `fn` hears of the records other daemons change, once each, in order per record. */
  onRemoteChange?(fn: RemoteSentinelChange): void;
  /** Stops hearing of changes (daemon stop). */
  close?(): Promise<void>;
}
