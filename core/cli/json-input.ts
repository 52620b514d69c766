/**
 * A JSON value given to a flag as `<json>` inline, `@<file>` or `-` (stdin): large values (a
 * 300 KB event) go through a file or a pipe, where the command line's size limit does not apply.
 */
import { readFlagFile, readStdin } from "./secret-input.js";
import { usageError } from "./output.js";

/** Parses the flag's value; a file that cannot be read or text that is not JSON is a usage error naming the flag and the source. */
export async function readJsonFlag(flag: string, value: string): Promise<unknown> {
  const [text, source] =
    value === "-"
      ? [await readStdin(), "stdin"]
      : value.startsWith("@")
        ? [await readFlagFile(flag, value.slice(1)), `the file ${value.slice(1)}`]
        : [value, "the command line"];
  if (text.trim() === "") throw usageError(`${flag}: ${source} holds no JSON (give <json>, @<file> or - for stdin)`);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usageError(`${flag} must be JSON (read from ${source}): ${(err as Error).message}`);
  }
}
