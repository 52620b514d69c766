/** `svc sentinel unwatch|poll-now|push`: changes through the daemon. */
import { ulid } from "ulid";
import type { IngestResult } from "../../plugin-api/context.js";
import { DaemonClient } from "../daemon-client.js";
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

export function buildPushEvent(subjects: string[], opts: PushOptions): Record<string, unknown> {
  let data: unknown;
  if (opts.data !== undefined) {
    try {
      data = JSON.parse(opts.data);
    } catch (err) {
      throw usageError(`--data must be JSON: ${(err as Error).message}`);
    }
  }
  if (opts.id !== undefined && (opts.id === "" || opts.id.includes("."))) throw usageError("--id must be non-empty and must not contain \".\"");
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
  const event = buildPushEvent(subjects, opts);
  const r = await (await DaemonClient.connect()).request<IngestResult>("POST", "/providers/agentpush/events", event);
  if (opts.json) return printJson({ id: event.id, ...r });
  const delivered = r.matched.filter((m) => m.outcome === "delivered").length;
  const dup = r.matched.filter((m) => m.outcome === "duplicate").length;
  const expired = r.matched.filter((m) => m.outcome === "expired").length;
  println(`pushed ${String(event.id)}: ${r.matched.length} match(es), ${delivered} delivered, ${dup} duplicate, ${expired} expired`);
}
