import { LIMITS } from "./limits.js";
import { decodeSecret } from "./secret.js";
import type { SecretVault } from "./vault.js";

/** The webhook target as stored in the sentinel record: never a raw secret, only vault refs. */
export interface StoredWebhookTarget {
  kind: "webhook";
  url: string;
  secretRef: string;
  /** The secret before the last rotation, kept for the dual-sign window. */
  prevSecretRef?: string;
  /** Epoch ms of the last rotation. */
  rotatedAt?: number;
}

export function asStoredTarget(stored: Record<string, unknown> | undefined): StoredWebhookTarget | undefined {
  if (!stored || stored.kind !== "webhook" || typeof stored.url !== "string" || typeof stored.secretRef !== "string") return undefined;
  return stored as unknown as StoredWebhookTarget;
}

/** Decoded keys by secret text (the last 256): decoding checks the canonical form with a regex and two base64 passes. */
const decoded = new Map<string, Buffer | undefined>();

function keyOf(secret: string | undefined): Buffer | undefined {
  if (secret === undefined) return undefined;
  if (decoded.has(secret)) return decoded.get(secret);
  const key = decodeSecret(secret);
  if (decoded.size >= 256) decoded.clear();
  decoded.set(secret, key);
  return key;
}

export type KeyLookup =
  | { ok: true; keys: Buffer[] }
  | { ok: false; reason: "sentinel_removed" | "delivered_rejected"; error: string };

/**
 * The HMAC keys that sign a delivery now: the current secret, plus the previous one for
 * {@link LIMITS.rotationWindowMs} from `rotatedAt`. A secret missing from the vault ends the row
 * as `sentinel_removed`; one that fails to decode ends it as `delivered_rejected` (never signs).
 */
export async function signingKeys(target: StoredWebhookTarget, vault: SecretVault, now: number): Promise<KeyLookup> {
  const current = await vault.get(target.secretRef);
  if (current === undefined) return { ok: false, reason: "sentinel_removed", error: "the sentinel's webhook secret was removed" };
  const key = keyOf(current);
  if (!key) return { ok: false, reason: "delivered_rejected", error: "the sentinel's webhook secret fails to decode; nothing was sent" };
  const keys = [key];
  if (target.prevSecretRef && typeof target.rotatedAt === "number" && now < target.rotatedAt + LIMITS.rotationWindowMs) {
    const prev = keyOf(await vault.get(target.prevSecretRef));
    if (prev && !prev.equals(key)) keys.push(prev);
  }
  return { ok: true, keys };
}
