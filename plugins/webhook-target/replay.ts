/**
 * Redelivery (Svix's "resend" and "recover since"): terminal outbox rows of one sentinel go back to
 * pending with their exact stored bytes and the same webhook-id, attempts reset, and are sent again
 * through the same dispatcher and SSRF gate. Refused, changing nothing, for a sentinel that is gone
 * or whose secret no longer decodes.
 */
import { z } from "zod";
import { SvcError, type Clock, type SentinelIngress } from "../../core/plugin-api/index.js";
import type { Dispatcher } from "./dispatcher.js";
import type { OutboxPort } from "./outbox/port.js";
import type { OutboxRow } from "./outbox/row.js";
import { signingKeys } from "./signing-keys.js";
import { asStoredTarget } from "./stored-target.js";
import type { VaultPort } from "./vault-port.js";

export const replaySelectorSchema = z.strictObject({
  eventId: z.string().min(1).optional().describe("replay only this event's row (dead or delivered)"),
  since: z.number().int().nonnegative().optional().describe("replay rows created at or after this time (epoch ms)"),
  dead: z.boolean().optional().describe("only dead rows (the default when neither eventId nor since is given)"),
});
export type ReplaySelector = z.infer<typeof replaySelectorSchema>;

export interface ReplayResult {
  sentinelId: string;
  replayed: Array<{ eventId: string; requestId: string; was: "delivered" | "dead"; replays: number }>;
  /** Rows the selector matched that were left alone (pending: already being delivered). */
  skipped: number;
}

export interface ReplayDeps {
  sentinels: SentinelIngress;
  outbox: OutboxPort;
  dispatcher: Pick<Dispatcher, "enqueue">;
  vault: VaultPort;
  clock: Clock;
}

function select(rows: OutboxRow[], sel: ReplaySelector): OutboxRow[] {
  const deadOnly = sel.dead === true || (sel.eventId === undefined && sel.since === undefined);
  return rows.filter(
    (r) =>
      (sel.eventId === undefined || r.eventId === sel.eventId) &&
      (sel.since === undefined || r.createdAt >= sel.since) &&
      (!deadOnly || r.status === "dead"),
  );
}

export async function replayRows(deps: ReplayDeps, sentinelId: string, sel: ReplaySelector): Promise<ReplayResult> {
  const view = deps.sentinels.get(sentinelId);
  if (!view)
    throw new SvcError("not_found", `no sentinel ${sentinelId}; the rows of a removed sentinel cannot be replayed`);
  const stored = asStoredTarget(view.spec.target);
  if (!stored)
    throw new SvcError(
      "invalid_input",
      `sentinel ${sentinelId} has a ${view.spec.target.kind} target; only webhook rows can be replayed`,
    );
  if (view.status === "expired" && view.spec.until.kind === "at") {
    throw new SvcError(
      "conflict",
      `sentinel ${sentinelId} has expired (until at); its rows would end sentinel_expired again, unsent`,
    );
  }
  const keys = await signingKeys(stored, deps.vault, deps.clock.now());
  if (!keys.ok)
    throw new SvcError(
      "conflict",
      `sentinel ${sentinelId} cannot sign (${keys.error}); rotate its secret with svc sentinel rotate-secret, then replay`,
    );
  const rows = await deps.outbox.rowsOf(sentinelId);
  const matched = select(rows, sel);
  if (sel.eventId !== undefined && matched.length === 0) {
    const known = rows.some((r) => r.eventId === sel.eventId);
    throw new SvcError(
      "not_found",
      known
        ? `event ${sel.eventId} of sentinel ${sentinelId} is not dead (pass dead: false, or it is still pending)`
        : `sentinel ${sentinelId} has no outbox row for event ${sel.eventId} (delivered rows are kept 24 hours, dead ones until the outbox needs their room)`,
    );
  }
  const terminal = matched.filter((r) => r.status !== "pending");
  const was = new Map(terminal.map((r) => [r.requestId, r.status as "delivered" | "dead"]));
  const changed = await deps.outbox.replay(terminal.map((r) => r.requestId));
  for (const row of changed) deps.dispatcher.enqueue(row.requestId);
  return {
    sentinelId,
    replayed: changed.map((r) => ({
      eventId: r.eventId,
      requestId: r.requestId,
      was: was.get(r.requestId)!,
      replays: r.replays ?? 1,
    })),
    skipped: matched.length - changed.length,
  };
}
