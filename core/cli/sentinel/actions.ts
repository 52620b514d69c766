/** `svc sentinel unwatch|poll-now|push|replay|resume`: changes through the daemon. */
import { ulid } from "ulid";
import type { IngestResult } from "../../plugin-api/context.js";
import { DaemonClient } from "../daemon-client.js";
import { parseTimeFlag } from "../duration.js";
import { SINCE_FLAG } from "../duration-flags.js";
import { readJsonFlag } from "../json-input.js";
import { printJson, println, usageError } from "../output.js";

export async function unwatch(id: string): Promise<void> {
  await (await DaemonClient.connect()).request("DELETE", `/sentinels/${encodeURIComponent(id)}`);
  println(`removed ${id}`);
}

export async function pollNow(json: boolean): Promise<void> {
  const r = await (await DaemonClient.connect()).request<{ polled: string[] }>("POST", "/sentinels/poll-now");
  if (json) return printJson(r);
  println(r.polled.length ? `polled: ${r.polled.join(", ")}` : "no polling provider is loaded");
}

export interface PushOptions {
  type: string;
  id?: string;
  data?: string;
  terminal?: boolean;
  json?: boolean;
}

export async function buildPushEvent(subjects: string[], opts: PushOptions): Promise<Record<string, unknown>> {
  const data = opts.data === undefined ? undefined : await readJsonFlag("--data", opts.data);
  if (opts.id !== undefined && (opts.id === "" || opts.id.includes(".")))
    throw usageError('--id must be non-empty and must not contain "."');
  return {
    id: opts.id ?? ulid(),
    type: opts.type,
    subjects,
    time: new Date().toISOString(),
    ...(data !== undefined ? { data } : {}),
    ...(opts.terminal ? { terminal: true } : {}),
  };
}

export async function push(subjects: string[], opts: PushOptions): Promise<void> {
  const event = await buildPushEvent(subjects, opts);
  const r = await (await DaemonClient.connect()).request<IngestResult>("POST", "/providers/agentpush/events", event);
  if (opts.json) return printJson({ id: event.id, ...r });
  // The engine's "delivered" outcome means the target durably accepted the event (a webhook row
  // is queued in the outbox; the POST follows): say "accepted", not "delivered".
  const accepted = r.matched.filter((m) => m.outcome === "delivered").length;
  const dup = r.matched.filter((m) => m.outcome === "duplicate").length;
  const expired = r.matched.filter((m) => m.outcome === "expired").length;
  println(
    `pushed ${String(event.id)}: ${r.matched.length} match(es), ${accepted} accepted, ${dup} duplicate, ${expired} expired`,
  );
}

export interface ReplayOptions {
  event?: string;
  since?: string;
  dead?: boolean;
  json?: boolean;
}

/** The body of `POST /sentinels/:id/replay`; `--since` counts back from `now` (../duration-flags.ts). */
export function replayBody(opts: ReplayOptions, now = Date.now()): Record<string, unknown> {
  return {
    ...(opts.event !== undefined ? { eventId: opts.event } : {}),
    ...(opts.since !== undefined ? { since: parseTimeFlag(opts.since, SINCE_FLAG, now) } : {}),
    ...(opts.dead ? { dead: true } : {}),
  };
}

export async function replay(id: string, opts: ReplayOptions): Promise<void> {
  const body = replayBody(opts);
  const r = await (await DaemonClient.connect()).request<{
    replayed: Array<{ eventId: string; was: string; replays: number }>;
    skipped: number;
  }>("POST", `/sentinels/${encodeURIComponent(id)}/replay`, body);
  if (opts.json) return printJson(r);
  if (r.replayed.length === 0)
    return println(
      `nothing to replay for ${id}${r.skipped ? ` (${r.skipped} row(s) still pending)` : " (no dead rows; use --event or --since for delivered ones)"}`,
    );
  for (const row of r.replayed) println(`replaying ${row.eventId} (was ${row.was}; replay #${row.replays})`);
  println(
    `${r.replayed.length} row(s) queued again with their stored bytes and webhook-id; follow with svc sentinel status ${id}`,
  );
}

export async function resume(id: string, json: boolean): Promise<void> {
  const r = await (await DaemonClient.connect()).request<{ sentinelId: string; resumed: boolean; pending: number }>(
    "POST",
    `/sentinels/${encodeURIComponent(id)}/resume`,
  );
  if (json) return printJson(r);
  if (!r.resumed)
    return println(
      `${id} was not suspended; nothing changed${r.pending ? ` (${r.pending} event(s) pending delivery)` : ""}`,
    );
  println(`resumed ${id}: ${r.pending} pending event(s) being sent; follow with svc sentinel status ${id}`);
}
