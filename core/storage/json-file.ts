import { readFile } from "node:fs/promises";
import { SvcError } from "../errors.js";
import { writeFileDurable, type AtomicWriteOptions } from "./atomic-write.js";
import { withFileLock } from "./lock.js";

/** Reads a JSON file; `undefined` when it does not exist. A file that is not JSON is an error naming it. */
export async function readJsonFile<T = unknown>(path: string): Promise<T | undefined> {
  const text = await readTextFile(path);
  if (text === undefined) return undefined;
  return parseJsonText<T>(path, text);
}

export async function readTextFile(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}

export function parseJsonText<T>(path: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new SvcError("config_invalid", `${path} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
}

export async function writeJsonFile(path: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileDurable(path, JSON.stringify(value, null, 2) + "\n", options);
}

/**
 * Read-modify-write under the file's cross-process lock. `mutate` gets the current value
 * (`undefined` when absent) and returns the next one; returning `undefined` leaves the file as is.
 */
export async function updateJsonFile<T>(
  path: string,
  mutate: (current: T | undefined) => T | undefined | Promise<T | undefined>,
  options: AtomicWriteOptions = {},
): Promise<T | undefined> {
  return withFileLock(path, async () => {
    const current = await readJsonFile<T>(path);
    const next = await mutate(current);
    if (next !== undefined) await writeJsonFile(path, next, options);
    return next ?? current;
  });
}
