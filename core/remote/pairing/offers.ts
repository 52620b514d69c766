/**
 * A pending offer: the daemon waits on the offer's broker channel (role `offer`, rate-limited by
 * the relay) until one handshake proves the offer's secret, stores the pairing, then closes the
 * channel. A handshake it refuses changes nothing: the daemon asks the relay to drop that peer
 * and keeps waiting for the right one, until the offer is used or expires, or has refused
 * MAX_REFUSED_HANDSHAKES (then it is withdrawn). A peer that joins and sends no handshake within
 * PEER_SILENCE_MS is dropped the same way. The offer lives in memory: a restarted daemon forgets
 * it, and accepting it then fails closed.
 */
import { toHex, type Bytes } from "../web/bytes.js";
import { randomBytes } from "../web/primitives.js";
import { SvcError } from "../../errors.js";
import { HandshakeError, respond } from "../web/handshake.js";
import { offerPrologue, offerUrl, type Offer } from "../web/offer.js";
import type { KeyPair } from "../web/primitives.js";
import { channelUrl, RendezvousSocket } from "../web/rendezvous.js";
import { pairingFromHandshake } from "../web/pairing.js";
import type { PairingRecord, PairingStore } from "./store.js";
import type { RemoteScope } from "../../daemon/principal.js";
import { wsFactory } from "./standing-link.js";

/** Refused handshakes after which an offer is withdrawn: enough for typos, never an endless target. */
export const MAX_REFUSED_HANDSHAKES = 10;
/** How long a peer on the offer's channel may stay without sending its handshake. */
export const PEER_SILENCE_MS = 15_000;

export interface OfferDeps {
  key: KeyPair;
  fingerprint: string;
  store: PairingStore;
  now: () => number;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  onPaired: (p: PairingRecord) => void;
  /** Overrides PEER_SILENCE_MS (tests). */
  peerSilenceMs?: number;
}

export interface PendingOffer {
  offer: Offer;
  url: string;
  /** The daemon no longer waits on the offer's channel (used, expired, withdrawn, dropped by the broker). */
  readonly closed: boolean;
  close(): void;
}

export async function openOffer(
  deps: OfferDeps,
  rendezvous: string,
  ttlMs: number,
  label: string,
  scope: RemoteScope,
): Promise<PendingOffer> {
  const offer: Offer = {
    fingerprint: deps.fingerprint,
    publicKey: deps.key.publicKey,
    secret: randomBytes(32),
    expiresAt: deps.now() + ttlMs,
    rendezvous,
    channel: toHex(randomBytes(16)),
  };
  let socket: RendezvousSocket;
  try {
    socket = await RendezvousSocket.open(wsFactory, channelUrl(rendezvous, offer.channel, "offer"));
  } catch (err) {
    throw new SvcError("connect", `cannot reach the rendezvous broker ${rendezvous}: ${(err as Error).message}`);
  }
  const expiry = setTimeout(() => socket.close("offer expired"), ttlMs);
  expiry.unref();
  let silence: ReturnType<typeof setTimeout> | undefined;
  const end = (reason: string) => (clearTimeout(expiry), clearTimeout(silence), socket.close(reason));

  // Peers are numbered as they come: the relay's `peer-left` separates one peer's frames from the next's.
  let peer = 0;
  let dropped = -1;
  let taken = -1;
  let refusals = 0;
  let paired = false;
  const refuse = (from: number, reason: string) => {
    refusals++;
    deps.log("pairing offer refused a handshake", { error: reason, refused: refusals, of: MAX_REFUSED_HANDSHAKES });
    if (refusals >= MAX_REFUSED_HANDSHAKES) {
      deps.log("pairing offer withdrawn: too many refused handshakes", { refused: refusals });
      return end("too many refused handshakes");
    }
    // Only the peer still on the channel is dropped, never one that joined after it.
    if (from === peer && dropped !== peer) {
      dropped = peer;
      clearTimeout(silence);
      socket.dropPeer();
    }
  };
  socket.onControl = (event) => {
    if (event === "peer-left") peer++, clearTimeout(silence);
    if (event === "paired") {
      const which = peer;
      silence = setTimeout(() => refuse(which, "the peer sent no handshake"), deps.peerSilenceMs ?? PEER_SILENCE_MS);
      silence.unref();
    }
  };

  const answer = async (msg1: Bytes, from: number) => {
    if (paired || socket.closed || from === dropped) return;
    if (from === peer) clearTimeout(silence);
    let r;
    try {
      r = await respond({
        prologue: offerPrologue(offer),
        psk: offer.secret,
        staticKey: deps.key,
        msg1,
        // The accepting device is told the scope it gets (it shows it); the owner chose it here.
        meta: { fingerprint: deps.fingerprint, label, scope },
        accept: async () => {
          if (deps.now() > offer.expiresAt) throw new HandshakeError("the pairing offer expired");
          if (await deps.store.isUsed(offer.channel)) throw new HandshakeError("the pairing offer was already used");
        },
      });
    } catch (err) {
      return refuse(from, (err as Error).message);
    }
    const meta = (r.meta ?? {}) as { label?: unknown };
    const record = {
      ...(await pairingFromHandshake(
        r.keys,
        r.peerStatic,
        "host",
        typeof meta.label === "string" ? meta.label.slice(0, 80) : "peer",
        rendezvous,
        deps.now(),
      )),
      scope,
    };
    await deps.store.add(record, { channel: offer.channel, expiresAt: offer.expiresAt });
    paired = true;
    socket.send(r.msg2);
    deps.log("pairing made", { pairing: record.id, scope });
    deps.onPaired(record);
    clearTimeout(expiry);
    clearTimeout(silence);
    // Let the answer leave before closing.
    setTimeout(() => socket.close("paired"), 200).unref();
  };
  // One handshake per peer (its first frame; a peer sends nothing else before the answer), one at a time.
  let queue = Promise.resolve();
  socket.takeFrames((msg1: Bytes) => {
    const from = peer;
    if (from === taken) return;
    taken = from;
    queue = queue
      .then(() => answer(msg1, from))
      .catch((err: Error) => (deps.log("pairing offer failed", { error: err.message }), end("pairing failed")));
  });
  return {
    offer,
    url: offerUrl(offer),
    get closed() {
      return socket.closed;
    },
    close: () => end("offer withdrawn"),
  };
}
