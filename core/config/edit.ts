/**
 * Values typed on the command line for `svc config set` (the key is parsed by dotted-path.ts's
 * `parseKey`).
 */

/** A command-line value: JSON when it parses, else the string itself (`asString` forces a string). */
export function parseCliValue(text: string, asString = false): unknown {
  if (asString) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
