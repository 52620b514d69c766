/** Pushing events to a daemon's agentpush provider (POST /providers/agentpush/events), for the storm tests. */
import type { DaemonProcess } from "./cli.js";

export interface PushedEvent {
  id: string;
  type: string;
  subjects: string[];
  data: unknown;
}

/**
 * POSTs one batch; resolves with the HTTP status once the body is read (200: every event accepted;
 * 503: refused for now, push again). Rejects when the connection fails (the daemon died mid-request:
 * nothing of the batch was acknowledged).
 */
export async function pushEvents(daemon: Pick<DaemonProcess, "fetch">, events: PushedEvent[]): Promise<number> {
  const res = await daemon.fetch("/providers/agentpush/events", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(events),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Event `n` of a storm on `subject` (default `storm:a`): its id `evt_<tag>_<n>`, a body of varying size. */
export function stormEvent(
  tag: string | number,
  n: number,
  data: Record<string, unknown> = {},
  subject = "storm:a",
): PushedEvent {
  return {
    id: `evt_${tag}_${n}`,
    type: "storm.item.made",
    subjects: [subject, `${subject}#${n}`],
    data: { ...data, pad: "p".repeat(n % 3000) },
  };
}

/** The body of a never-ending `agentpush` sentinel labelled `ci` that prompts session `sessionId` with events on `subject`. */
export function sessionSentinel(sessionId: string, subject: string): Record<string, unknown> {
  return {
    match: [{ subject }],
    until: { kind: "never" },
    target: { kind: "session", sessionId },
    provider: "agentpush",
    label: "ci",
  };
}
