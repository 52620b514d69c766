/**
 * `$SVC_HOME/pairings.json` (0600): the persisted pairings and the offers already used. Changed
 * under the file lock, written atomically; the pairing secret never leaves this file.
 */
import { join } from "node:path";
import { SvcError } from "../../errors.js";
import { readJsonFile, updateJsonFile } from "../../storage/json-file.js";
import type { RemoteScope } from "../../daemon/principal.js";

export const PAIRINGS_FILE = "pairings.json";

export interface PairingRecord {
  id: string;
  /** `host`: this daemon made the offer and serves the peer; `peer`: this home accepted it. */
  role: "host" | "peer";
  label: string;
  /** The other end's X25519 public key (base64url) and its fingerprint. */
  peerKey: string;
  peerFingerprint: string;
  /** Pre-shared key of the standing links (base64url); secret. */
  secret: string;
  channel: string;
  rendezvous: string;
  createdAt: number;
  /**
   * What the peer may do here (a `host` pairing: this daemon serves it): `read`, or `operate`, given
   * by the owner when offering (`svc pair offer --scope`) or later (`svc pair scope`). Absent (a
   * pairing from before scopes, or a `peer` one): read.
   */
  scope?: RemoteScope;
}

interface PairingsFile {
  version: 1;
  pairings: PairingRecord[];
  /** Offer channels that completed (kept until their expiry), so a reused offer is named as such. */
  usedOffers: Array<{ channel: string; expiresAt: number }>;
}

export class PairingStore {
  readonly path: string;

  constructor(
    home: string,
    private readonly now: () => number,
  ) {
    this.path = join(home, PAIRINGS_FILE);
  }

  async list(): Promise<PairingRecord[]> {
    return (await this.read()).pairings;
  }

  async isUsed(channel: string): Promise<boolean> {
    return (await this.read()).usedOffers.some((u) => u.channel === channel);
  }

  /** Stores a pairing; with `offer`, marks that offer used in the same write (fails if it already was). */
  async add(p: PairingRecord, offer?: { channel: string; expiresAt: number }): Promise<void> {
    await this.update((f) => {
      if (offer) {
        if (f.usedOffers.some((u) => u.channel === offer.channel))
          throw new SvcError("conflict", "this pairing offer was already used");
        f.usedOffers = [...f.usedOffers.filter((u) => u.expiresAt > this.now()), offer];
      }
      f.pairings = [...f.pairings.filter((x) => x.id !== p.id), p];
      return f;
    });
  }

  /** Sets a pairing's scope; the record, or `undefined` when there is no such pairing. */
  async setScope(id: string, scope: RemoteScope): Promise<PairingRecord | undefined> {
    let changed: PairingRecord | undefined;
    await this.update((f) => {
      const i = f.pairings.findIndex((x) => x.id === id);
      if (i < 0) return undefined;
      changed = { ...f.pairings[i]!, scope };
      f.pairings = f.pairings.map((x, j) => (j === i ? changed! : x));
      return f;
    });
    return changed;
  }

  async remove(id: string): Promise<PairingRecord | undefined> {
    let removed: PairingRecord | undefined;
    await this.update((f) => {
      removed = f.pairings.find((x) => x.id === id);
      if (!removed) return undefined;
      f.pairings = f.pairings.filter((x) => x.id !== id);
      return f;
    });
    return removed;
  }

  private async read(): Promise<PairingsFile> {
    return normalize(await readJsonFile<PairingsFile>(this.path));
  }

  private async update(mutate: (f: PairingsFile) => PairingsFile | undefined): Promise<void> {
    await updateJsonFile<PairingsFile>(this.path, (cur) => mutate(normalize(cur)), { mode: 0o600 });
  }
}

function normalize(f: PairingsFile | undefined): PairingsFile {
  return {
    version: 1,
    pairings: Array.isArray(f?.pairings) ? f.pairings : [],
    usedOffers: Array.isArray(f?.usedOffers) ? f.usedOffers : [],
  };
}
