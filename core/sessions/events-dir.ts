import { isAbsolute, join, resolve } from "node:path";
import { expandTilde } from "../storage/paths.js";

/**
 * `sessions.eventsDir` as SPEC.md resolves it: absent = `$SVC_HOME/sessions` (`~/.svc/sessions`),
 * `~/` expands, a relative path resolves against the home directory.
 */
export function resolveEventsDir(home: string, configured: string | undefined): string {
  if (configured === undefined || configured.trim() === "") return join(home, "sessions");
  const expanded = expandTilde(configured);
  return isAbsolute(expanded) ? expanded : resolve(home, expanded);
}

/** The per-session transcript files. */
export function sessionFiles(eventsDir: string, sessionId: string) {
  const dir = join(eventsDir, sessionId);
  return {
    dir,
    events: join(dir, "events.jsonl"),
    terminal: join(dir, "terminal.jsonl"),
    parked: join(dir, "parked.json"),
  };
}

const SESSION_ID = /^[A-Za-z0-9_-]{1,80}$/;

/** Session ids become directory names: only safe characters. */
export function isSessionId(id: string): boolean {
  return SESSION_ID.test(id);
}
