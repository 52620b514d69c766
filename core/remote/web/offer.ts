/**
 * The pairing offer: `svc://pair?v=1&fp=…&k=…&s=…&e=…&r=…&c=…` (fingerprint, the daemon's X25519
 * public key, the one-time secret, the expiry in epoch ms, the broker URL, the rendezvous
 * channel). Its canonical form is the handshake's prologue: any changed field fails the handshake.
 */
import { fromB64u, toB64u, toHex, type Bytes } from "./bytes.js";
import { sha256 } from "./primitives.js";

export interface Offer {
  fingerprint: string;
  publicKey: Bytes;
  secret: Bytes;
  expiresAt: number;
  rendezvous: string;
  channel: string;
}

export class OfferError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OfferError";
  }
}

/** 20 hex characters of SHA-256 over the public key: short enough for a DNS label. */
export async function fingerprintOf(publicKey: Uint8Array): Promise<string> {
  return toHex((await sha256(publicKey)).slice(0, 10));
}

export function offerUrl(o: Offer): string {
  const q = new URLSearchParams({
    v: "1",
    fp: o.fingerprint,
    k: toB64u(o.publicKey),
    s: toB64u(o.secret),
    e: String(o.expiresAt),
    r: o.rendezvous,
    c: o.channel,
  });
  return `svc://pair?${q.toString()}`;
}

/**
 * Parses an offer URL (also accepted: the bare query, or a pair page URL with it in the
 * fragment) and checks that it is complete and that the fingerprint matches the key. Expiry is
 * checked separately, against the caller's clock.
 */
export async function parseOffer(text: string): Promise<Offer> {
  const t = text.trim();
  let query: string;
  if (t.startsWith("svc://pair?")) query = t.slice("svc://pair?".length);
  else if (t.includes("#")) return parseOffer(decodeURIComponent(t.slice(t.indexOf("#") + 1)).replace(/^offer=/, ""));
  else if (t.startsWith("v=")) query = t;
  else throw new OfferError("not a pairing offer: expected a svc://pair?… URL (from `svc pair offer`)");
  const q = new URLSearchParams(query);
  const need = (k: string) => {
    const v = q.get(k);
    if (v === null || v === "") throw new OfferError(`the pairing offer has no ${k}= field: copy the whole offer`);
    return v;
  };
  if (need("v") !== "1")
    throw new OfferError(`pairing offer version ${q.get("v")} is not supported (this svc understands v=1)`);
  const publicKey = fromB64u(need("k"));
  const secret = fromB64u(need("s"));
  if (publicKey?.length !== 32) throw new OfferError("the pairing offer's key (k=) is not a 32-byte base64url key");
  if (secret?.length !== 32) throw new OfferError("the pairing offer's secret (s=) is not 32 base64url bytes");
  const expiresAt = Number(need("e"));
  if (!Number.isSafeInteger(expiresAt)) throw new OfferError("the pairing offer's expiry (e=) is not a time");
  const rendezvous = need("r");
  if (!/^wss?:\/\/[^\s/?#]+/.test(rendezvous))
    throw new OfferError("the pairing offer's broker (r=) is not a ws:// or wss:// URL");
  const channel = need("c");
  if (!/^[a-f0-9]{32}$/.test(channel)) throw new OfferError("the pairing offer's channel (c=) is malformed");
  const fingerprint = need("fp");
  if (fingerprint !== (await fingerprintOf(publicKey))) {
    throw new OfferError("the pairing offer was altered: its fingerprint (fp=) does not match its key (k=)");
  }
  return { fingerprint, publicKey, secret, expiresAt, rendezvous, channel };
}

/** The handshake prologue of an offer: its canonical URL. */
export function offerPrologue(o: Offer): string {
  return "svc-pair/1 " + offerUrl(o);
}
