/**
 * A daemon `session:<what>` event (core/sessions) as a sentinel event: type `session.<what>`,
 * subject `session:<id>`, data as emitted. The id is derived from the session id, the event and
 * its own content (time and data), so it is the same however often it is computed and carries no
 * `.`; the bus's seq is not used, since it restarts with the daemon.
 */
import { createHash } from "node:crypto";
import { isValidEventId, type HeardDaemonEvent, type SvcEvent } from "../../core/plugin-api/index.js";

/** The daemon's session ids (core/sessions/events-dir.ts). */
const SESSION_ID = /^[A-Za-z0-9_-]{1,80}$/;
const WHAT = /^[a-z][a-z0-9-]{0,60}$/;

/** The session events the daemon emits today (docs/events.md); others under `session:` are carried the same way. */
export const SESSION_EVENT_TYPES = [
  "session.started",
  "session.resumed",
  "session.turn-ended",
  "session.stalled",
  "session.prompt-stale",
  "session.handoff-suggested",
  "session.context-warn",
  "session.context-compact",
  "session.context-continued",
  "session.context-hard-stop",
  "session.verdict",
  "session.ended",
] as const;

export function sessionSubject(sessionId: string): string {
  return `session:${sessionId}`;
}

/** The sentinel event for a daemon event; undefined when it is not a session event about a session. */
export function toSessionEvent(e: HeardDaemonEvent): SvcEvent | undefined {
  if (!e.type.startsWith("session:")) return undefined;
  const what = e.type.slice("session:".length);
  const data = e.data as Record<string, unknown> | undefined;
  const sessionId = data?.sessionId;
  if (!WHAT.test(what) || typeof sessionId !== "string" || !SESSION_ID.test(sessionId)) return undefined;
  const digest = createHash("sha256")
    .update(JSON.stringify({ at: e.at, data }))
    .digest("hex")
    .slice(0, 16);
  const id = `${sessionId}-${what}-${digest}`;
  if (!isValidEventId(id)) return undefined;
  return {
    id,
    type: `session.${what}`,
    subjects: [sessionSubject(sessionId)],
    time: new Date(e.at).toISOString(),
    data,
  };
}
