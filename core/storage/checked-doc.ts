/**
 * Small checksummed documents: `{"version":N,"checksum":"<crc32>","<field>":{…}}`, written
 * atomically, where the checksum is the crc32 of the JSON text of the value under `<field>`.
 * A read tells `missing` from `damaged` (with why) and never returns something a writer did not
 * write; the file is left as it is, for inspection (docs/storage.md).
 */
import type { z } from "zod";
import { writeFileDurable } from "./atomic-write.js";
import { textChecksum } from "./checked-lines.js";
import { readTextFile } from "./json-file.js";

export type CheckedRead<T> =
  | { state: "ok"; value: T }
  | { state: "missing" }
  | { state: "damaged"; path: string; reason: string };

/** Writes `value` under `field` atomically, with its version and checksum; `mode` as in writeFileDurable. */
export async function writeCheckedDoc(
  path: string,
  version: number,
  field: string,
  value: unknown,
  mode = 0o600,
): Promise<void> {
  const text = JSON.stringify(value);
  await writeFileDurable(
    path,
    `{"version":${version},"checksum":"${textChecksum(text)}",${JSON.stringify(field)}:${text}}\n`,
    { mode },
  );
}

/**
 * Reads what {@link writeCheckedDoc} wrote: `damaged` when the file is not JSON, has another
 * version, a checksum that fails, or a value that does not validate against `schema`.
 */
export async function readCheckedDoc<S extends z.ZodType>(
  path: string,
  version: number,
  field: string,
  schema: S,
): Promise<CheckedRead<z.infer<S>>> {
  const text = await readTextFile(path);
  if (text === undefined) return { state: "missing" };
  const damaged = (reason: string) => ({ state: "damaged" as const, path, reason });
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(text);
  } catch {
    return damaged("it is not JSON (cut short or edited)");
  }
  if (doc?.version !== version)
    return damaged(`its version is ${JSON.stringify(doc?.version)}, this svc reads ${version}`);
  if (typeof doc.checksum !== "string" || textChecksum(JSON.stringify(doc[field])) !== doc.checksum)
    return damaged("its checksum does not match its content");
  const parsed = schema.safeParse(doc[field]);
  if (!parsed.success)
    return damaged(
      `field ${parsed.error.issues[0]?.path.join(".") || `(${field})`}: ${parsed.error.issues[0]?.message}`,
    );
  return { state: "ok", value: parsed.data };
}
