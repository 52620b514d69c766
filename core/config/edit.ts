/**
 * Values typed on the command line for `svc config set`. The key parser it pairs with is
 * re-exported from dotted-path.ts, where the dotted get/set/unset on the raw tree live.
 */
export { parseKey } from "./dotted-path.js";

/** A command-line value: JSON when it parses, else the string itself (`asString` forces a string). */
export function parseCliValue(text: string, asString = false): unknown {
  if (asString) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
