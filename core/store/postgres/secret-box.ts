/**
 * Secrets at rest in the team store: AES-256-GCM through Node's crypto. A sealed value is
 * `0x01 | iv (12 bytes) | tag (16 bytes) | ciphertext`; the key never reaches the database.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { SvcError } from "../../errors.js";

const VERSION = 1;

export function sealSecret(key: Buffer, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
}

export function unsealSecret(key: Buffer, sealed: Buffer): string {
  if (sealed.length < 29 || sealed[0] !== VERSION)
    throw new SvcError("store_key_mismatch", "a stored secret is not in the team store's sealed format");
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.subarray(1, 13));
    decipher.setAuthTag(sealed.subarray(13, 29));
    return Buffer.concat([decipher.update(sealed.subarray(29)), decipher.final()]).toString("utf8");
  } catch {
    throw new SvcError(
      "store_key_mismatch",
      "a stored secret does not open with this daemon's team key: every daemon of the team needs the same key",
    );
  }
}
