/**
 * The daemon's X25519 identity (`$SVC_HOME/remote-identity.json`, 0600): the static key of its
 * pairings and of the end-to-end tunnel. Created once, under the file lock, written atomically.
 */
import { join } from "node:path";
import { SvcError } from "../errors.js";
import { readJsonFile, updateJsonFile } from "../storage/json-file.js";
import { fromB64u, toB64u } from "./web/bytes.js";
import { fingerprintOf } from "./web/offer.js";
import { exportPrivate, generateKeyPair, importKeyPair, type KeyPair } from "./web/primitives.js";

export const IDENTITY_FILE = "remote-identity.json";

export interface Identity {
  key: KeyPair;
  fingerprint: string;
}

interface IdentityFile {
  version: 1;
  publicKey: string;
  privateKey: string;
}

export async function loadIdentity(home: string): Promise<Identity> {
  const path = join(home, IDENTITY_FILE);
  let file = await readJsonFile<IdentityFile>(path);
  if (!file) {
    const kp = await generateKeyPair();
    const fresh: IdentityFile = {
      version: 1,
      publicKey: toB64u(kp.publicKey),
      privateKey: toB64u(await exportPrivate(kp)),
    };
    // Two processes racing to create it: the lock makes the first one's key the only one.
    file = await updateJsonFile<IdentityFile>(path, (cur) => (cur ? undefined : fresh), { mode: 0o600 });
  }
  const pub = file && fromB64u(file.publicKey);
  const priv = file && fromB64u(file.privateKey);
  if (pub?.length !== 32 || !priv)
    throw new SvcError(
      "config_invalid",
      `${path} is not an svc identity file (remove it to make a new identity; existing pairings then stop working)`,
    );
  const key = await importKeyPair(priv, pub);
  return { key, fingerprint: await fingerprintOf(pub) };
}
