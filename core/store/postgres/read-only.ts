/**
 * The team database as `svc doctor` opens it: every session read-only on the server
 * (`default_transaction_read_only`), so no check can write; `migrate` only compares the stored
 * version with what the caller knows (refusing a newer one as the daemon does) and records it for
 * the store's check; `unseal` without the team key says so.
 */
import { randomBytes } from "node:crypto";
import { SvcError } from "../../errors.js";
import type { Logger } from "../../runtime/logger.js";
import { SVC_VERSION } from "../../version.js";
import { openTeamDatabase, type OpenTeamDatabase } from "./database.js";

export interface ReadOnlyTeamDatabase extends OpenTeamDatabase {
  /** Schema versions this svc knows, by owner, as the plugins declared them through `migrate`. */
  readonly known: ReadonlyMap<string, number>;
}

/** The URL with `default_transaction_read_only=on` in its startup options. */
function readOnlyUrl(url: string): string {
  const u = new URL(url);
  const options = u.searchParams.get("options");
  u.searchParams.set("options", `${options ? `${options} ` : ""}-c default_transaction_read_only=on`);
  return u.toString();
}

export async function openReadOnlyTeamDatabase(opts: {
  url: string;
  /** Undefined when the team key could not be loaded: `unseal` then throws `store_key_missing`. */
  key: Buffer | undefined;
  logger: Logger;
}): Promise<ReadOnlyTeamDatabase> {
  const db = await openTeamDatabase({
    url: readOnlyUrl(opts.url),
    key: opts.key ?? randomBytes(32),
    daemonId: `doctor-${process.pid}`,
    logger: opts.logger,
    max: 2,
  });
  const known = new Map<string, number>();
  return {
    ...db,
    known,
    async migrate(owner, migrations) {
      known.set(owner, migrations.length);
      const stored = await storedVersion(db, owner);
      if (stored && stored.version > migrations.length)
        throw new SvcError(
          "store_schema_newer",
          `the team store's ${owner} schema is version ${stored.version} (written by svc ${stored.svcVersion}), newer than this svc ${SVC_VERSION} knows (${migrations.length})`,
        );
    },
    async listen() {
      return async () => undefined;
    },
    unseal(sealed) {
      if (!opts.key)
        throw new SvcError("store_key_missing", "the team key is not set, so no stored secret can be opened");
      return db.unseal(sealed);
    },
  };
}

/** An owner's stored schema version, or undefined when it has none (or there is no version table yet). */
export async function storedVersion(
  db: OpenTeamDatabase,
  owner: string,
): Promise<{ version: number; svcVersion: string } | undefined> {
  const table = await db.query<{ t: string | null }>("SELECT to_regclass('svc_schema_versions')::text AS t");
  if (!table.rows[0]?.t) return undefined;
  const { rows } = await db.query<{ version: number; svc_version: string }>(
    "SELECT version, svc_version FROM svc_schema_versions WHERE owner = $1",
    [owner],
  );
  return rows[0] ? { version: rows[0].version, svcVersion: rows[0].svc_version } : undefined;
}
