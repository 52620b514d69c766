import { LIMITS } from "./limits.js";
import type { StoredWebhookTarget } from "./stored-target.js";
import type { VaultPort } from "./vault-port.js";

export type KeyLookup =
  | { ok: true; keys: Buffer[] }
  | { ok: false; reason: "sentinel_removed" | "delivered_rejected"; error: string };

/**
 * The HMAC keys that sign a delivery now: the current secret, plus the previous one for
 * {@link LIMITS.rotationWindowMs} from `rotatedAt`. A secret missing from the vault ends the row
 * as `sentinel_removed`; one that fails to decode ends it as `delivered_rejected` (never signs).
 */
export async function signingKeys(target: StoredWebhookTarget, vault: VaultPort, now: number): Promise<KeyLookup> {
  const current = await vault.key(target.secretRef);
  if (current.missing)
    return { ok: false, reason: "sentinel_removed", error: "the sentinel's webhook secret was removed" };
  const key = current.key;
  if (!key)
    return {
      ok: false,
      reason: "delivered_rejected",
      error: "the sentinel's webhook secret fails to decode; nothing was sent",
    };
  const keys = [key];
  if (
    target.prevSecretRef &&
    typeof target.rotatedAt === "number" &&
    now < target.rotatedAt + LIMITS.rotationWindowMs
  ) {
    const prev = await vault.key(target.prevSecretRef);
    const prevKey = prev.missing ? undefined : prev.key;
    if (prevKey && !prevKey.equals(key)) keys.push(prevKey);
  }
  return { ok: true, keys };
}
