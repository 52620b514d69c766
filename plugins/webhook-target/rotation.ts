import type { Clock, Random, SentinelIngress } from "../../core/plugin-api/index.js";
import { SvcError } from "../../core/plugin-api/index.js";
import type { ChallengeVerifier } from "./challenge.js";
import { LIMITS } from "./limits.js";
import { generateSecret, parseSecret } from "./secret.js";
import { asStoredTarget, subscriptionIdOf } from "./stored-target.js";
import type { VaultPort } from "./vault-port.js";

export interface RotationResult {
  sentinelId: string;
  /** False when the given secret is already the current one (nothing changed, no restamp). */
  rotated: boolean;
  rotatedAt?: number;
  /** Until when the previous secret also signs. */
  dualSignUntil?: number;
  /** Only when the daemon generated the secret: shown once, never stored anywhere but the vault. */
  secret?: string;
}

/**
 * Rotates a webhook sentinel's secret: the new secret is challenge-verified first, then stored in
 * the vault and made current; the previous one is kept as `prevSecretRef` with `rotatedAt`, so
 * both sign for 10 minutes. Setting the current secret again changes nothing.
 */
export async function rotateSecret(
  deps: { sentinels: SentinelIngress; vault: VaultPort; verifier: ChallengeVerifier; clock: Clock; random: Random },
  input: { sentinelId: string; secret?: string; principal: string },
): Promise<RotationResult> {
  const { sentinels, vault, verifier, clock, random } = deps;
  const view = sentinels.get(input.sentinelId);
  if (!view) throw new SvcError("not_found", `no sentinel ${input.sentinelId}`);
  const stored = asStoredTarget(view.spec.target);
  if (!stored)
    throw new SvcError(
      "invalid_input",
      `sentinel ${input.sentinelId} has a ${view.spec.target.kind} target; only webhook targets have a secret to rotate`,
    );
  const generated = input.secret === undefined;
  const secret = input.secret ?? generateSecret(random);
  parseSecret(secret, "invalid_input");
  const current = await vault.get(stored.secretRef);
  if (!generated && current === secret) return { sentinelId: input.sentinelId, rotated: false };
  // Signed with the new and the current secret: a receiver that knows only the current one
  // verifies the challenge and learns the new secret from the answer to this rotation.
  await verifier.verify({
    url: stored.url,
    secret,
    subscriptionId: subscriptionIdOf(input.sentinelId, stored),
    principal: input.principal,
    ...(current !== undefined ? { alsoSignWith: current } : {}),
  });
  const ref = await vault.put(input.sentinelId, secret);
  const rotatedAt = clock.now();
  let dropped: string | undefined;
  try {
    await sentinels.updateStoredTarget(input.sentinelId, (current) => {
      const cur = asStoredTarget(current);
      if (!cur) throw new SvcError("conflict", `sentinel ${input.sentinelId} no longer has a webhook target`);
      dropped = cur.prevSecretRef;
      return { ...cur, secretRef: ref, prevSecretRef: cur.secretRef, rotatedAt };
    });
  } catch (err) {
    await vault.remove([ref]).catch(() => undefined);
    throw err;
  }
  await vault.remove([dropped]);
  return {
    sentinelId: input.sentinelId,
    rotated: true,
    rotatedAt,
    dualSignUntil: rotatedAt + LIMITS.rotationWindowMs,
    ...(generated ? { secret } : {}),
  };
}
