/**
 * Small read-only helpers the stores' offline checks share (`svc doctor`): file modes and the
 * `.damaged-<ms>` copies svc keeps. Nothing here writes, moves or truncates anything.
 */
import { readdir, stat } from "node:fs/promises";
import { join, relative } from "node:path";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { journalSize, readJournalLength } from "./journal-length.js";

/** A secret-bearing file that group or others may read or write: an `error` finding (none when it is absent or 0600). */
export async function secretModeFinding(home: string, path: string): Promise<DoctorFinding[]> {
  const st = await stat(path).catch(() => undefined);
  if (!st || (st.mode & 0o077) === 0) return [];
  const file = relative(home, path);
  return [
    {
      severity: "error",
      file,
      message: `mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}: the file holds secrets, and users other than its owner may read it`,
      fix: `chmod 600 ${JSON.stringify(path)}; if others could read it, treat its secrets as exposed and rotate them`,
    },
  ];
}

/**
 * The `.damaged-<…>` copies svc kept of files in `dir` whose names start with `prefix` (a damaged
 * journal copied aside, a damaged snapshot moved aside): `warn`, to be looked through and deleted.
 */
export async function damagedCopyFindings(home: string, dir: string, prefix = ""): Promise<DoctorFinding[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  return names
    .filter((n) => n.startsWith(prefix) && /\.damaged-[^/]+$/.test(n))
    .sort()
    .map((n) => ({
      severity: "warn" as const,
      file: relative(home, join(dir, n)),
      message: "a copy svc kept of a damaged file (the live file was repaired or rebuilt without it)",
      fix: "look through it if you want to know what was lost (the daemon's log names the lines), then delete it",
    }));
}

/** The info finding for a torn tail: bytes after the last newline, a write kill -9 cut short. */
export function tornTailFinding(file: string, bytes: number): DoctorFinding {
  return {
    severity: "info",
    file,
    message: `ends in a torn line (${bytes} bytes after the last newline): a write cut short by a crash, never acknowledged, so nothing is lost`,
    fix: "nothing to do: the next daemon start cuts it off",
  };
}

/**
 * The torn-tail finding of the journal `file` (relative to `home`), unless its length record shows
 * the torn line was acknowledged: then it is part of a loss the journal check reports (an error).
 */
export async function tornTailFindings(home: string, file: string, bytes: number): Promise<DoctorFinding[]> {
  const path = join(home, file);
  const [size, record] = [await journalSize(path), await readJournalLength(path).catch(() => undefined)];
  if (size !== undefined && record && size < record.bytes) return [];
  return [tornTailFinding(file, bytes)];
}
