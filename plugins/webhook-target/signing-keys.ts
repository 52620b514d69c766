import { LIMITS } from "./limits.js";
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

export type KeyLookup =
  | { ok: true; keys: Buffer[] }
  | { ok: false; reason: "sentinel_removed" | "delivered_rejected"; error: string };

/**
 * The HMAC keys that sign a delivery now: the current secret, plus the previous one for
 * {@link LIMITS.rotationWindowMs} from `rotatedAt`. A secret missing from the vault ends the row
 * as `sentinel_removed`; one that fails to decode ends it as `delivered_rejected` (never signs).
 */
export async function signingKeys(target: StoredWebhookTarget, vault: SecretVault, now: number): Promise<KeyLookup> {
  const current = await vault.key(target.secretRef);
  if (current.missing) return { ok: false, reason: "sentinel_removed", error: "the sentinel's webhook secret was removed" };
  const key = current.key;
  if (!key) return { ok: false, reason: "delivered_rejected", error: "the sentinel's webhook secret fails to decode; nothing was sent" };
  const keys = [key];
  if (target.prevSecretRef && typeof target.rotatedAt === "number" && now < target.rotatedAt + LIMITS.rotationWindowMs) {
    const prev = await vault.key(target.prevSecretRef);
    const prevKey = prev.missing ? undefined : prev.key;
    if (prevKey && !prevKey.equals(key)) keys.push(prevKey);
  }
  return { ok: true, keys };
}
