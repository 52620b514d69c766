/**
 * Resuming a webhook sentinel whose delivery endpoint health suspended (`svc sentinel resume`, a
 * refresh, a successful `svc webhooks check`): the stored suspension is cleared, every pending row
 * gets a fresh set of attempts (time suspended does not use up its retries) and is enqueued, and
 * `sentinel:delivery-resumed {sentinelId, subscriptionId?, pending}` is emitted.
 */
import {
  SvcError,
  type DaemonEventSink,
  type Logger,
  type SentinelIngress,
  type TargetResumeResult,
} from "../../core/plugin-api/index.js";
import type { Dispatcher } from "./dispatcher.js";
import type { EndpointHealth } from "./endpoint-health.js";
import type { OutboxPort } from "./outbox/port.js";
import { asStoredTarget } from "./stored-target.js";

export interface ResumeDeps {
  sentinels: SentinelIngress;
  outbox: OutboxPort;
  dispatcher: Pick<Dispatcher, "enqueue">;
  health: EndpointHealth;
  events: () => DaemonEventSink | undefined;
  logger: Logger;
}

/** Resumes delivery; `resumed: false` (nothing changed) when it was not suspended. */
export async function resumeDelivery(deps: ResumeDeps, sentinelId: string): Promise<TargetResumeResult> {
  const view = deps.sentinels.get(sentinelId);
  if (!view) throw new SvcError("not_found", `no sentinel ${sentinelId}`);
  const stored = asStoredTarget(view.spec.target);
  if (!stored)
    throw new SvcError(
      "invalid_input",
      `sentinel ${sentinelId} has a ${view.spec.target.kind} target, whose delivery is never suspended; only webhook sentinels are`,
    );
  const was = await deps.health.clear(sentinelId);
  const pending = (await deps.outbox.rowsOf(sentinelId)).filter((r) => r.status === "pending");
  if (!was) return { resumed: false, pending: pending.length };
  await deps.outbox.restartAttempts(pending.map((r) => r.requestId));
  for (const row of pending) deps.dispatcher.enqueue(row.requestId);
  const subscriptionId = stored.mcp?.subscriptionId;
  deps.logger.info("webhook delivery resumed", { sentinelId, pending: pending.length });
  deps.events()?.emit("sentinel:delivery-resumed", {
    sentinelId,
    ...(subscriptionId ? { subscriptionId } : {}),
    pending: pending.length,
  });
  return { resumed: true, pending: pending.length };
}
