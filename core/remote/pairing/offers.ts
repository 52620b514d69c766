/**
 * A pending offer: the daemon waits on the offer's broker channel (role `offer`, rate-limited by
 * the relay) for one handshake, refuses it once the offer expired or was used, stores the
 * pairing, then closes the channel. The offer lives in memory: a restarted daemon forgets it,
 * and accepting it then fails closed.
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

export interface OfferDeps {
  key: KeyPair;
  fingerprint: string;
  store: PairingStore;
  now: () => number;
  log: (msg: string, fields?: Record<string, unknown>) => void;
  onPaired: (p: PairingRecord) => void;
}

export interface PendingOffer {
  offer: Offer;
  url: string;
  /** The daemon no longer waits on the offer's channel (used, refused, expired, dropped by the broker). */
  readonly closed: boolean;
  close(): void;
}

export async function openOffer(deps: OfferDeps, rendezvous: string, ttlMs: number, label: string, scope: RemoteScope): Promise<PendingOffer> {
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
  let busy = false;
  socket.takeFrames((msg1: Bytes) => {
    if (busy) return;
    busy = true;
    void respond({
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
    })
      .then(async (r) => {
        const meta = (r.meta ?? {}) as { label?: unknown };
        const record = { ...(await pairingFromHandshake(r.keys, r.peerStatic, "host", typeof meta.label === "string" ? meta.label.slice(0, 80) : "peer", rendezvous, deps.now())), scope };
        await deps.store.add(record, { channel: offer.channel, expiresAt: offer.expiresAt });
        socket.send(r.msg2);
        deps.log("pairing made", { pairing: record.id, scope });
        deps.onPaired(record);
        // Let the answer leave before closing.
        setTimeout(() => socket.close("paired"), 200).unref();
      })
      .catch((err: Error) => {
        deps.log("pairing offer refused a handshake", { error: err.message });
        socket.close("handshake refused");
      })
      .finally(() => clearTimeout(expiry));
  });
  return {
    offer,
    url: offerUrl(offer),
    get closed() {
      return socket.closed;
    },
    close: () => (clearTimeout(expiry), socket.close("offer withdrawn")),
  };
}
