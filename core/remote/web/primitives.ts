/**
 * The platform's crypto (WebCrypto, the same API in Node 20 and in browsers): X25519 key
 * agreement, HKDF-SHA-256 and AES-256-GCM. Nothing here implements a primitive; it only names
 * the calls. AES-GCM rather than ChaCha20-Poly1305 because WebCrypto has no ChaCha.
 */
import { concat, type Bytes } from "./bytes.js";

/** WebCrypto's key type (a type-only import: nothing of Node reaches the browser). */
export type CryptoKey = import("node:crypto").webcrypto.CryptoKey;
type CryptoKeyPair = import("node:crypto").webcrypto.CryptoKeyPair;

const subtle = globalThis.crypto.subtle;

export interface KeyPair {
  privateKey: CryptoKey;
  /** Raw 32-byte X25519 public key. */
  publicKey: Bytes;
}

export async function generateKeyPair(): Promise<KeyPair> {
  const kp = (await subtle.generateKey({ name: "X25519" }, true, ["deriveBits"])) as CryptoKeyPair;
  return { privateKey: kp.privateKey, publicKey: new Uint8Array(await subtle.exportKey("raw", kp.publicKey)) };
}

/** PKCS#8 export of a private key (for the daemon's identity file). */
export async function exportPrivate(kp: KeyPair): Promise<Bytes> {
  return new Uint8Array(await subtle.exportKey("pkcs8", kp.privateKey));
}

export async function importKeyPair(pkcs8: Bytes, publicKey: Bytes): Promise<KeyPair> {
  const privateKey = await subtle.importKey("pkcs8", pkcs8, { name: "X25519" }, true, ["deriveBits"]);
  return { privateKey, publicKey };
}

/** X25519(our private, their public). A malformed public key is an error, never a zero secret. */
export async function dh(own: CryptoKey, theirPublic: Bytes): Promise<Bytes> {
  if (theirPublic.length !== 32) throw new Error("an X25519 public key is 32 bytes");
  const pub = await subtle.importKey("raw", theirPublic, { name: "X25519" }, true, []);
  return new Uint8Array(await subtle.deriveBits({ name: "X25519", public: pub }, own, 256));
}

export async function hkdf(ikm: Bytes, salt: Bytes, info: string, bytes: number): Promise<Bytes> {
  const key = await subtle.importKey("raw", ikm, "HKDF", false, ["deriveBits"]);
  const out = await subtle.deriveBits(
    { name: "HKDF", hash: "SHA-256", salt, info: new TextEncoder().encode(info) },
    key,
    bytes * 8,
  );
  return new Uint8Array(out);
}

export async function sha256(...parts: Uint8Array[]): Promise<Bytes> {
  return new Uint8Array(await subtle.digest("SHA-256", concat(...parts)));
}

export function randomBytes(n: number): Bytes {
  return globalThis.crypto.getRandomValues(new Uint8Array(n));
}

/** A 96-bit GCM nonce from a 64-bit counter (each key is used with counters 0, 1, 2, … once). */
export function counterNonce(counter: number): Bytes {
  const iv = new Uint8Array(12);
  new DataView(iv.buffer).setBigUint64(4, BigInt(counter));
  return iv;
}

export async function aeadKey(raw: Bytes): Promise<CryptoKey> {
  return subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
}

export async function seal(key: CryptoKey, counter: number, aad: Bytes, plaintext: Bytes): Promise<Bytes> {
  return new Uint8Array(
    await subtle.encrypt({ name: "AES-GCM", iv: counterNonce(counter), additionalData: aad }, key, plaintext),
  );
}

/** Decrypts, or returns `undefined` when the ciphertext, key, counter or aad do not match. */
export async function open(key: CryptoKey, counter: number, aad: Bytes, ciphertext: Bytes): Promise<Bytes | undefined> {
  try {
    return new Uint8Array(
      await subtle.decrypt({ name: "AES-GCM", iv: counterNonce(counter), additionalData: aad }, key, ciphertext),
    );
  } catch {
    return undefined;
  }
}
