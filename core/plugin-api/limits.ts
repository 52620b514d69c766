/**
 * Input limits every surface applies (documented in docs/limits.md). Exported through the plugin
 * API so that providers validate their events by the same rules as the engine.
 */

/** Event ids: the dedup key and the `webhook-id` header, so they must be a valid header value. */
export const EVENT_ID_MAX = 200;
/** Printable ASCII without space or `.` (`.` separates ids inside svc's own keys). */
export const EVENT_ID_PATTERN = /^[\x21-\x2d\x2f-\x7e]+$/;
export const EVENT_ID_RULE = `1 to ${EVENT_ID_MAX} printable ASCII characters, without spaces, control characters or "."`;

export const EVENT_TYPE_MAX = 200;
export const SUBJECTS_PER_EVENT_MAX = 100;
export const SUBJECT_LENGTH_MAX = 1_000;
export const CLAUSES_PER_SENTINEL_MAX = 100;
export const TYPES_PER_CLAUSE_MAX = 50;
/** Nesting of objects and arrays in any JSON request body (an event's `data` included). */
export const JSON_DEPTH_MAX = 64;

/** Whether `id` is a valid event id; see {@link EVENT_ID_RULE}. */
export function isValidEventId(id: string): boolean {
  return id.length >= 1 && id.length <= EVENT_ID_MAX && EVENT_ID_PATTERN.test(id);
}

/**
 * The deepest nesting of objects and arrays in a JSON text, scanned without parsing (so a
 * 100,000-level body costs one pass, not a stack overflow). Stops counting past `limit` and
 * returns the character offset where it was crossed.
 */
export function jsonDepthExceeded(text: string, limit = JSON_DEPTH_MAX): number | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // Jump over the string: its closing quote is the next one not escaped by an odd run of backslashes.
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return undefined; // unterminated: nothing after it nests
        let slash = end - 1;
        while (text.charCodeAt(slash) === 0x5c) slash--;
        if ((end - 1 - slash) % 2 === 0) break;
      }
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return i;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return undefined;
}
