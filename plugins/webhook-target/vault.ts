import { join } from "node:path";
import type { Random } from "../../core/plugin-api/index.js";
import { SvcError, readJsonFile, updateJsonFile } from "../../core/plugin-api/index.js";
import { decodeSecret } from "./secret.js";
import type { SecretRecord, VaultPort } from "./vault-port.js";

/** `$SVC_HOME/sentinels-secrets.json`: raw webhook secrets by `swsec_<ulid>` ref (mode 0600). */
export const VAULT_FILE = "sentinels-secrets.json";

interface VaultRow {
  sentinelId: string;
  secret: string;
  createdAt: number;
}

interface VaultFile {
  version: 1;
  secrets: Record<string, VaultRow>;
}

const FILE_MODE = 0o600;

/**
 * The sidecar store of raw webhook secrets. Sentinel records hold only the opaque ref; the file is
 * created 0600 from its first byte and every change is atomic, fsynced and locked. The daemon is
 * its only writer, so reads are served from memory once loaded.
 */
export class SecretVault implements VaultPort {
  private readonly path: string;
  private cache?: Map<string, VaultRow>;
  /** HMAC keys decoded from the cached rows (`undefined`: the secret fails to decode); dropped with the cache. */
  private readonly keys = new Map<string, Buffer | undefined>();

  constructor(
    home: string,
    private readonly random: Random,
    private readonly now: () => number,
  ) {
    this.path = join(home, VAULT_FILE);
  }

  /** Stores a secret for a sentinel and returns its new ref. */
  async put(sentinelId: string, secret: string): Promise<string> {
    const ref = `swsec_${this.random.ulid()}`;
    await this.update((rows) => rows.set(ref, { sentinelId, secret, createdAt: this.now() }));
    return ref;
  }

  async get(ref: string): Promise<string | undefined> {
    const rows = await this.load();
    return rows.get(ref)?.secret;
  }

  /**
   * The HMAC key of a stored secret, decoded once per secret: `missing` when the ref is not in the
   * vault, `key: undefined` when the secret fails to decode (it must never sign).
   */
  async key(ref: string): Promise<{ missing: true } | { missing: false; key: Buffer | undefined }> {
    const secret = (await this.load()).get(ref)?.secret;
    if (secret === undefined) return { missing: true };
    if (!this.keys.has(ref)) this.keys.set(ref, decodeSecret(secret));
    return { missing: false, key: this.keys.get(ref) };
  }

  /** Every stored secret (for the host's redaction floor, never shown). */
  async values(): Promise<string[]> {
    return [...(await this.load()).values()].map((row) => row.secret);
  }

  /** The stored secrets of the given sentinels (`svc store migrate`). */
  async list(sentinelIds: ReadonlySet<string>): Promise<SecretRecord[]> {
    return [...(await this.load())]
      .filter(([, row]) => sentinelIds.has(row.sentinelId))
      .map(([ref, row]) => ({ ref, ...row }));
  }

  /** Stores secrets under their given refs; a ref already present is left as it is. Returns how many were added. */
  async adopt(records: readonly SecretRecord[]): Promise<number> {
    const rows = await this.load();
    const fresh = records.filter((r) => !rows.has(r.ref));
    if (fresh.length === 0) return 0;
    let added = 0;
    await this.update((rows) => {
      for (const { ref, sentinelId, secret, createdAt } of fresh) {
        if (rows.has(ref)) continue;
        rows.set(ref, { sentinelId, secret, createdAt });
        added++;
      }
    });
    return added;
  }

  /** Removes the given refs (unknown refs are ignored). */
  async remove(refs: ReadonlyArray<string | undefined>): Promise<void> {
    const wanted = refs.filter((r): r is string => typeof r === "string");
    if (wanted.length === 0) return;
    await this.update((rows) => wanted.forEach((r) => rows.delete(r)));
  }

  /** Removes every secret of a sentinel. */
  async removeSentinel(sentinelId: string): Promise<void> {
    await this.update((rows) => {
      for (const [ref, row] of rows) if (row.sentinelId === sentinelId) rows.delete(ref);
    });
  }

  /** Removes the rows for which `keep` is false (the file is rewritten only when one goes); returns how many went. */
  async prune(keep: (ref: string, row: { sentinelId: string; createdAt: number }) => boolean): Promise<number> {
    const doomed = [...(await this.load())].filter(([ref, row]) => !keep(ref, row)).map(([ref]) => ref);
    await this.remove(doomed);
    return doomed.length;
  }

  private async load(): Promise<Map<string, VaultRow>> {
    if (!this.cache) this.cache = toMap(await this.guard(() => readJsonFile<VaultFile>(this.path)));
    return this.cache;
  }

  private async update(mutate: (rows: Map<string, VaultRow>) => void): Promise<void> {
    let next: Map<string, VaultRow> | undefined;
    await this.guard(() =>
      updateJsonFile<VaultFile>(
        this.path,
        (current) => {
          next = toMap(current);
          mutate(next);
          return { version: 1, secrets: Object.fromEntries(next) };
        },
        { mode: FILE_MODE },
      ),
    );
    this.cache = next;
    this.keys.clear();
  }

  /** A JSON parse error quotes the file's text, which holds secrets: replace it with a safe message. */
  private async guard<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (SvcError.is(err) && err.code === "config_invalid") {
        throw new SvcError(
          "internal",
          `${this.path} is not valid JSON; it holds webhook secrets, so svc leaves it untouched: restore it from a backup or remove it (webhook sentinels then need new secrets)`,
        );
      }
      throw err;
    }
  }
}

function toMap(file: VaultFile | undefined): Map<string, VaultRow> {
  const secrets =
    file && typeof file === "object" && file.secrets && typeof file.secrets === "object" ? file.secrets : {};
  return new Map(Object.entries(secrets));
}
