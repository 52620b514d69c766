/**
 * What both ends derive from a finished handshake, identically: the pairing id (from the
 * transcript hash), the standing links' secret and their broker channel.
 */
import { toB64u, toHex, utf8 } from "./bytes.js";
import { fingerprintOf } from "./offer.js";
import { sha256 } from "./primitives.js";
import type { SessionKeys } from "./handshake.js";
import type { PairingRecord } from "../pairing/store.js";

/** The handshake prologue of a pairing's standing links. */
export const linkPrologue = (id: string) => `svc-link/1 ${id}`;

export async function pairingFromHandshake(
  keys: SessionKeys,
  peerKey: Uint8Array,
  role: "host" | "peer",
  label: string,
  rendezvous: string,
  now: number,
): Promise<PairingRecord> {
  const channel = toHex((await sha256(utf8("svc-link/1 channel"), keys.secret)).slice(0, 16));
  return {
    id: toHex(keys.transcript.slice(0, 6)),
    role,
    label,
    peerKey: toB64u(peerKey),
    peerFingerprint: await fingerprintOf(peerKey),
    secret: toB64u(keys.secret),
    channel,
    rendezvous,
    createdAt: now,
  };
}
