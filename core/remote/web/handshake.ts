/**
 * The two-message handshake that opens every encrypted channel (pairing and standing links),
 * shaped after Noise KK with a pre-shared key, built from platform primitives only:
 *
 *   msg1 (initiator → responder): 0x01 ‖ e_i ‖ AEAD(k1, s_i ‖ meta)   k1 = HKDF(DH(e_i, s_r) ‖ psk, H(prologue))
 *   msg2 (responder → initiator): 0x02 ‖ e_r ‖ AEAD(k2, meta)
 *   keys = HKDF(DH(e_i,s_r) ‖ DH(e_i,e_r) ‖ DH(s_i,e_r) ‖ DH(s_i,s_r) ‖ psk, H(prologue ‖ msg1 ‖ e_r))
 *
 * The psk is the offer's one-time secret (pairing) or the pairing's secret (standing links); the
 * prologue is the canonical offer or the pairing id, so a changed offer field, a wrong psk or a
 * wrong static key makes the AEAD fail: the handshake fails closed.
 */
import { concat, equalBytes, fromUtf8, utf8, type Bytes } from "./bytes.js";
import { aeadKey, dh, generateKeyPair, hkdf, open, seal, sha256, type CryptoKey, type KeyPair } from "./primitives.js";

export class HandshakeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "HandshakeError";
  }
}

export interface SessionKeys {
  send: CryptoKey;
  receive: CryptoKey;
  /** 32 bytes both ends agree on; the pairing stores it as the standing links' psk. */
  secret: Bytes;
  /** Hash of the whole handshake: both ends derive the same pairing id from it. */
  transcript: Bytes;
}

interface Common {
  prologue: string;
  psk: Bytes;
  staticKey: KeyPair;
}

const MSG1 = 1;
const MSG2 = 2;

async function derive(
  ikm: Bytes,
  salt: Bytes,
): Promise<{ i2r: CryptoKey; r2i: CryptoKey; confirm: CryptoKey; secret: Bytes }> {
  const okm = await hkdf(ikm, salt, "svc/1 session", 128);
  return {
    i2r: await aeadKey(okm.slice(0, 32)),
    r2i: await aeadKey(okm.slice(32, 64)),
    confirm: await aeadKey(okm.slice(64, 96)),
    secret: okm.slice(96, 128),
  };
}

export interface Initiator {
  msg1: Bytes;
  /** Completes with the responder's msg2; throws HandshakeError when it does not authenticate. */
  finish(msg2: Bytes): Promise<{ keys: SessionKeys; meta: unknown }>;
}

/** Starts a handshake towards the responder whose static public key is `remoteStatic`. */
export async function initiate(o: Common & { remoteStatic: Bytes; meta: unknown }): Promise<Initiator> {
  const e = await generateKeyPair();
  const ph = await sha256(utf8(o.prologue));
  const es = await dh(e.privateKey, o.remoteStatic);
  const k1 = await aeadKey(await hkdf(concat(es, o.psk), ph, "svc/1 msg1", 32));
  const body = await seal(
    k1,
    0,
    concat(ph, e.publicKey),
    concat(o.staticKey.publicKey, utf8(JSON.stringify(o.meta ?? null))),
  );
  const msg1 = concat(Uint8Array.of(MSG1), e.publicKey, body);
  return {
    msg1,
    async finish(msg2) {
      if (msg2.length < 33 + 16 || msg2[0] !== MSG2) throw new HandshakeError("the handshake answer is malformed");
      const er = msg2.slice(1, 33);
      const transcript = await sha256(ph, msg1, er);
      const ikm = concat(
        es,
        await dh(e.privateKey, er),
        await dh(o.staticKey.privateKey, er),
        await dh(o.staticKey.privateKey, o.remoteStatic),
        o.psk,
      );
      const k = await derive(ikm, transcript);
      const plain = await open(k.confirm, 0, transcript, msg2.slice(33));
      if (!plain)
        throw new HandshakeError(
          "the other end did not prove the expected key: wrong peer key, or a tampered or replayed handshake",
        );
      return { keys: { send: k.i2r, receive: k.r2i, secret: k.secret, transcript }, meta: parseMeta(plain) };
    },
  };
}

export interface Responded {
  msg2: Bytes;
  keys: SessionKeys;
  /** The initiator's static public key, proven by the handshake. */
  peerStatic: Bytes;
  meta: unknown;
}

/**
 * Answers msg1. `accept` sees the initiator's static key and meta before anything is sent back
 * and throws to refuse (a wrong peer key, a used offer). Throws HandshakeError when msg1 does not
 * decrypt (wrong psk, changed offer, not meant for this key).
 */
export async function respond(
  o: Common & { msg1: Bytes; meta: unknown; accept(peerStatic: Bytes, meta: unknown): void | Promise<void> },
): Promise<Responded> {
  const { msg1 } = o;
  if (msg1.length < 33 + 32 + 16 || msg1[0] !== MSG1) throw new HandshakeError("the handshake opening is malformed");
  const ei = msg1.slice(1, 33);
  const ph = await sha256(utf8(o.prologue));
  const es = await dh(o.staticKey.privateKey, ei);
  const k1 = await aeadKey(await hkdf(concat(es, o.psk), ph, "svc/1 msg1", 32));
  const plain = await open(k1, 0, concat(ph, ei), msg1.slice(33));
  if (!plain)
    throw new HandshakeError("the handshake did not authenticate: the offer or secret is wrong or was altered");
  const peerStatic = plain.slice(0, 32);
  const meta = parseMeta(plain.slice(32));
  await o.accept(peerStatic, meta);
  const e = await generateKeyPair();
  const transcript = await sha256(ph, msg1, e.publicKey);
  const ikm = concat(
    es,
    await dh(e.privateKey, ei),
    await dh(e.privateKey, peerStatic),
    await dh(o.staticKey.privateKey, peerStatic),
    o.psk,
  );
  const k = await derive(ikm, transcript);
  const msg2 = concat(
    Uint8Array.of(MSG2),
    e.publicKey,
    await seal(k.confirm, 0, transcript, utf8(JSON.stringify(o.meta ?? null))),
  );
  return { msg2, keys: { send: k.r2i, receive: k.i2r, secret: k.secret, transcript }, peerStatic, meta };
}

function parseMeta(b: Uint8Array): unknown {
  try {
    return JSON.parse(fromUtf8(b));
  } catch {
    throw new HandshakeError("the handshake carried malformed metadata");
  }
}

export { equalBytes };
