import { join } from "node:path";

/** The per-session transcript files. */
export function sessionFiles(eventsDir: string, sessionId: string) {
  const dir = join(eventsDir, sessionId);
  return {
    dir,
    events: join(dir, "events.jsonl"),
    terminal: join(dir, "terminal.jsonl"),
    parked: join(dir, "parked.json"),
    /** The session's durable record (session-record.ts). */
    record: join(dir, "session.json"),
    verdict: join(dir, "verdict.json"),
  };
}

const SESSION_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** Session ids become directory names: only safe characters. */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}
