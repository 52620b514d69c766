/**
 * Modes of the secret-bearing files no store checks for itself: `pairings.json` (each pairing's
 * link secret) and `remote-identity.json` (the daemon's private key); and `$SVC_HOME` itself, which
 * svc creates 0700: a home others can enter lets them read any file in it that a mode slip left open.
 */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import type { DoctorFinding } from "../../plugin-api/doctor.js";
import { PAIRINGS_FILE } from "../../remote/pairing/store.js";
import { IDENTITY_FILE } from "../../remote/identity.js";
import { secretModeFinding } from "../../storage/file-check.js";

export async function checkSecretFiles(home: string): Promise<DoctorFinding[]> {
  const out: DoctorFinding[] = [];
  for (const name of [PAIRINGS_FILE, IDENTITY_FILE]) out.push(...(await secretModeFinding(home, join(home, name))));
  const st = await stat(home).catch(() => undefined);
  if (st && (st.mode & 0o077) !== 0)
    out.push({
      severity: "warn",
      file: ".",
      message: `$SVC_HOME is mode ${(st.mode & 0o777).toString(8).padStart(4, "0")}: other users may enter it and read any file in it not itself 0600 (transcripts, sentinels, logs)`,
      fix: `chmod 700 ${JSON.stringify(home)}`,
    });
  return out;
}
