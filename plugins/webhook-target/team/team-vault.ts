/**
 * The webhook secret vault in the team store: table `webhook_secrets`, each secret sealed with
 * the team's key (`teamDatabase.seal`, AES-256-GCM by the host; the key never reaches the
 * database). A ref names one secret forever (a rotation writes a new ref), so each daemon caches
 * what it opened by ref and asks the database only for refs it has not seen: a secret written by
 * another daemon is read at its first use here. Loaded only in team mode (open-vault.ts).
 */
import type { Random, TeamDatabase } from "../../../core/plugin-api/index.js";
import { decodeSecret } from "../secret.js";
import type { SecretRecord, VaultKey, VaultPort } from "../vault-port.js";
import { WEBHOOK_MIGRATIONS, WEBHOOK_OWNER } from "./schema.js";

/**
 * Rows younger than this are never pruned: another daemon may be between writing a secret and
 * storing the sentinel that references it (a creation or rotation in progress), and this
 * daemon's view of the sentinels may not show it yet.
 */
export const TEAM_PRUNE_GRACE_MS = 15 * 60_000;

interface Opened {
  sentinelId: string;
  secret: string;
  /** The decoded HMAC key (`undefined`: the secret fails to decode); set at first use. */
  key?: Buffer | undefined;
  decoded?: boolean;
}

export interface TeamVaultOptions {
  random: Random;
  now: () => number;
}

/**
 * Opens the vault: migrates the webhook target's tables (once per team, under the host's lock),
 * then checks that this daemon's key opens a stored secret, so a daemon given another key than
 * the team's says so at once (`store_key_mismatch`) rather than at its first delivery.
 */
export async function openTeamVault(db: TeamDatabase, opts: TeamVaultOptions): Promise<TeamVault> {
  await db.migrate(WEBHOOK_OWNER, WEBHOOK_MIGRATIONS);
  const vault = new TeamVault(db, opts);
  await vault.checkKey();
  return vault;
}

export class TeamVault implements VaultPort {
  private readonly opened = new Map<string, Opened>();

  constructor(
    private readonly db: TeamDatabase,
    private readonly opts: TeamVaultOptions,
  ) {}

  async put(sentinelId: string, secret: string): Promise<string> {
    const ref = `swsec_${this.opts.random.ulid()}`;
    await this.db.query("INSERT INTO webhook_secrets (ref, sentinel_id, sealed, created_at) VALUES ($1, $2, $3, $4)", [
      ref,
      sentinelId,
      this.db.seal(secret),
      this.opts.now(),
    ]);
    this.opened.set(ref, { sentinelId, secret });
    return ref;
  }

  get(ref: string): string | undefined | Promise<string | undefined> {
    const held = this.opened.get(ref);
    return held ? held.secret : this.fetch(ref).then((row) => row?.secret);
  }

  key(ref: string): VaultKey | Promise<VaultKey> {
    const held = this.opened.get(ref);
    return held ? keyOf(held) : this.fetch(ref).then((row) => (row ? keyOf(row) : { missing: true }));
  }

  /** Every secret of the team (those opened here, and the others unsealed once): the redaction floor's values. */
  async values(): Promise<string[]> {
    const { rows } = await this.db.query<{ ref: string; sentinel_id: string; sealed: Buffer }>(
      "SELECT ref, sentinel_id, sealed FROM webhook_secrets WHERE NOT (ref = ANY($1::text[]))",
      [[...this.opened.keys()]],
    );
    for (const row of rows) this.remember(row);
    return [...this.opened.values()].map((o) => o.secret);
  }

  async remove(refs: ReadonlyArray<string | undefined>): Promise<void> {
    const wanted = refs.filter((r): r is string => typeof r === "string");
    if (wanted.length === 0) return;
    await this.db.query("DELETE FROM webhook_secrets WHERE ref = ANY($1::text[])", [wanted]);
    for (const ref of wanted) this.opened.delete(ref);
  }

  async removeSentinel(sentinelId: string): Promise<void> {
    await this.db.query("DELETE FROM webhook_secrets WHERE sentinel_id = $1", [sentinelId]);
    for (const [ref, o] of this.opened) if (o.sentinelId === sentinelId) this.opened.delete(ref);
  }

  /** As the file vault's, except that rows younger than {@link TEAM_PRUNE_GRACE_MS} are always kept. */
  async prune(keep: (ref: string, row: { sentinelId: string; createdAt: number }) => boolean): Promise<number> {
    const { rows } = await this.db.query<{ ref: string; sentinel_id: string; created_at: string }>(
      "SELECT ref, sentinel_id, created_at FROM webhook_secrets WHERE created_at < $1",
      [this.opts.now() - TEAM_PRUNE_GRACE_MS],
    );
    const doomed = rows
      .filter((r) => !keep(r.ref, { sentinelId: r.sentinel_id, createdAt: Number(r.created_at) }))
      .map((r) => r.ref);
    await this.remove(doomed);
    return doomed.length;
  }

  /** Unseals the newest stored secret, if any: throws `store_key_mismatch` when this daemon's key is not the team's. */
  async checkKey(): Promise<void> {
    const { rows } = await this.db.query<{ ref: string; sentinel_id: string; sealed: Buffer }>(
      "SELECT ref, sentinel_id, sealed FROM webhook_secrets ORDER BY created_at DESC LIMIT 1",
    );
    if (rows[0]) this.remember(rows[0]);
  }

  private async fetch(ref: string): Promise<Opened | undefined> {
    const { rows } = await this.db.query<{ ref: string; sentinel_id: string; sealed: Buffer }>(
      "SELECT ref, sentinel_id, sealed FROM webhook_secrets WHERE ref = $1",
      [ref],
    );
    return rows[0] ? this.remember(rows[0]) : undefined;
  }

  /** Unseals a row once (a throw names the key mismatch, never the secret) and caches it by ref. */
  private remember(row: { ref: string; sentinel_id: string; sealed: Buffer }): Opened {
    const held = this.opened.get(row.ref);
    if (held) return held;
    const opened: Opened = { sentinelId: row.sentinel_id, secret: this.db.unseal(row.sealed) };
    this.opened.set(row.ref, opened);
    return opened;
  }
}

function keyOf(o: Opened): VaultKey {
  if (!o.decoded) {
    o.key = decodeSecret(o.secret);
    o.decoded = true;
  }
  return { missing: false, key: o.key };
}

/** The stored secrets of the given sentinels, unsealed (`svc store migrate`). */
export async function listTeamSecrets(db: TeamDatabase, sentinelIds: ReadonlySet<string>): Promise<SecretRecord[]> {
  const { rows } = await db.query<{ ref: string; sentinel_id: string; sealed: Buffer; created_at: string }>(
    "SELECT ref, sentinel_id, sealed, created_at FROM webhook_secrets WHERE sentinel_id = ANY($1::text[]) ORDER BY created_at, ref",
    [[...sentinelIds]],
  );
  return rows.map((r) => ({
    ref: r.ref,
    sentinelId: r.sentinel_id,
    secret: db.unseal(r.sealed),
    createdAt: Number(r.created_at),
  }));
}
