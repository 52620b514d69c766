/**
 * The daemon's side of `svc webhooks check <url>` (`POST /webhooks/check {url}`): every webhook
 * sentinel whose delivery endpoint health suspended and that delivers to that URL gets a fresh
 * signed verification challenge with its own secret (and its own `X-MCP-Subscription-Id`); each
 * whose callback echoes it is resumed. Sentinels that are not suspended are not contacted.
 */
import type { SentinelIngress, TargetResumeResult } from "../../core/plugin-api/index.js";
import { challengeReason, type ChallengeVerifier } from "./challenge.js";
import type { DeliveryFailure } from "./failure-category.js";
import type { OutboxPort } from "./outbox/port.js";
import { asStoredTarget, callbackUrl, subscriptionIdOf } from "./stored-target.js";
import type { VaultPort } from "./vault-port.js";

export interface CallbackCheck {
  sentinelId: string;
  subscriptionId?: string;
  /** The callback echoed the challenge and delivery resumed. */
  resumed: boolean;
  /** Rows now being sent (when resumed). */
  pending?: number;
  /** Why not (when not resumed): the challenge's failure category. */
  reason?: DeliveryFailure;
}

export interface CallbackCheckDeps {
  sentinels: SentinelIngress;
  outbox: OutboxPort;
  vault: VaultPort;
  verifier: ChallengeVerifier;
  resume(sentinelId: string): Promise<TargetResumeResult>;
}

export async function checkSuspendedCallbacks(
  deps: CallbackCheckDeps,
  url: string,
  principal: string,
): Promise<{ checked: CallbackCheck[] }> {
  const callback = callbackUrl(url);
  // Sentinels that ended (count, subject_terminal) still deliver what they accepted: they are among the pending rows' owners.
  const ids = new Set([
    ...deps.sentinels.active().map((v) => v.id),
    ...(await deps.outbox.pending()).map((r) => r.sentinelId),
  ]);
  const checked: CallbackCheck[] = [];
  for (const sentinelId of ids) {
    const stored = asStoredTarget(deps.sentinels.get(sentinelId)?.spec.target);
    if (!stored?.suspended || stored.url !== callback) continue;
    const subscriptionId = subscriptionIdOf(sentinelId, stored);
    const named = { sentinelId, ...(stored.mcp ? { subscriptionId } : {}) };
    try {
      const secret = await deps.vault.get(stored.secretRef);
      if (secret === undefined) throw new Error("the sentinel's secret is gone from the vault");
      await deps.verifier.verify({ url: stored.url, secret, subscriptionId, principal, fresh: true });
    } catch (err) {
      checked.push({ ...named, resumed: false, reason: challengeReason(err) ?? "challenge_failed" });
      continue;
    }
    const { resumed, pending } = await deps.resume(sentinelId);
    checked.push({ ...named, resumed, pending });
  }
  return { checked };
}
