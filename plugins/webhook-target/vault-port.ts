/**
 * What the webhook target's parts (target.ts, rotation, signing keys, replay, the callback check)
 * ask of the secret vault, whichever store keeps it: the file {@link SecretVault}
 * (`sentinels-secrets.json`, the default) or the team store's sealed table
 * (team/team-vault.ts). Reads may answer synchronously (a cached secret) or with a promise:
 * callers `await` them.
 */
import type { MaybePromise } from "./outbox/port.js";

/** A stored secret's HMAC key: `missing` when the ref is not in the vault, `key: undefined` when it fails to decode. */
export type VaultKey = { missing: true } | { missing: false; key: Buffer | undefined };

export interface VaultPort {
  /** Stores a secret for a sentinel (durable when it resolves) and returns its new `swsec_<ulid>` ref. */
  put(sentinelId: string, secret: string): Promise<string>;
  /** The secret stored under `ref`, or undefined. */
  get(ref: string): MaybePromise<string | undefined>;
  /** The HMAC key of a stored secret, decoded once per secret (it must never sign when it fails to decode). */
  key(ref: string): MaybePromise<VaultKey>;
  /** Every stored secret (for the host's redaction floor, never shown). */
  values(): MaybePromise<string[]>;
  /** Removes the given refs (unknown refs are ignored). */
  remove(refs: ReadonlyArray<string | undefined>): Promise<void>;
  /** Removes every secret of a sentinel. */
  removeSentinel(sentinelId: string): Promise<void>;
  /** Removes the rows for which `keep` is false; returns how many went. */
  prune(keep: (ref: string, row: { sentinelId: string; createdAt: number }) => boolean): Promise<number>;
}

/** One stored secret as `svc store migrate` moves it (the secret in clear only inside the process). */
export interface SecretRecord {
  ref: string;
  sentinelId: string;
  secret: string;
  createdAt: number;
}
