/**
 * A session's shim directory, `$SVC_HOME/shims/<sessionId>/`, put first on the session's PATH when
 * `provenance.wrapGh` is true: `gh` (the shim), `gh-editor` (its GH_EDITOR stand-in) and
 * `provenance.json` (what the footer says). Removed when the session ends.
 */
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Provenance } from "./gh-footer.js";

/** The compiled shim program (from the sources, under vitest, the build's copy). */
export function shimProgram(): string {
  const here = fileURLToPath(import.meta.url);
  return here.endsWith(".ts")
    ? join(dirname(here), "../../dist/core/workspaces/gh-shim.js")
    : join(dirname(here), "gh-shim.js");
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** A session id as svc makes them (`ses_` and a ULID): the only names a shim directory may have. */
const SESSION_ID = /^ses_[0-9A-Za-z]{1,64}$/;

function shimDir(home: string, sessionId: string): string {
  if (!SESSION_ID.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
  return join(home, "shims", sessionId);
}

export async function writeShimDir(home: string, p: Provenance): Promise<string> {
  const dir = shimDir(home, p.sessionId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const run = (extra: string) =>
    `#!/bin/sh\nSVC_GH_SHIM_DIR=${quote(dir)} exec ${quote(process.execPath)} ${quote(shimProgram())}${extra} "$@"\n`;
  await writeFile(join(dir, "provenance.json"), JSON.stringify(p) + "\n");
  await writeFile(join(dir, "gh"), run(""));
  await writeFile(join(dir, "gh-editor"), run(" --svc-editor"));
  await chmod(join(dir, "gh"), 0o755);
  await chmod(join(dir, "gh-editor"), 0o755);
  return dir;
}

export async function removeShimDir(home: string, sessionId: string): Promise<void> {
  await rm(shimDir(home, sessionId), { recursive: true, force: true });
}
