/**
 * What both ends derive from a finished handshake, identically: the pairing id (from the
 * transcript hash), the standing links' secret and their broker channel.
 */
import { toB64u, toHex, utf8 } from "../web/bytes.js";
import { fingerprintOf } from "../web/offer.js";
import { sha256 } from "../web/primitives.js";
import type { SessionKeys } from "../web/handshake.js";
import type { PairingRecord } from "./store.js";

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
