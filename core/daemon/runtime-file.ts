/**
 * `$SVC_HOME/runtime.json`: how the CLI finds the running daemon (pid, port, per-boot token).
 * Written (0600) at start, removed at a clean stop; a file left by a killed daemon is stale when
 * its pid is gone. Reading it is runtime-info.ts's (no schema library: the CLI's fast path reads it).
 */
import { rm } from "node:fs/promises";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { secretModeFinding } from "../storage/file-check.js";
import { homeFile } from "../storage/paths.js";
import { writeJsonFile } from "../storage/json-file.js";
import { isProcessAlive, readRuntimeInfo, type RuntimeInfo } from "./runtime-info.js";

export { baseUrlOf, isProcessAlive, liveRuntimeInfo, readRuntimeInfo, type RuntimeInfo } from "./runtime-info.js";

export async function writeRuntimeInfo(home: string, info: RuntimeInfo): Promise<void> {
  await writeJsonFile(homeFile(home, "runtime"), info, { mode: 0o600 });
}

export async function removeRuntimeInfo(home: string, pid: number): Promise<void> {
  const info = await readRuntimeInfo(home);
  if (info && info.pid !== pid) return; // another daemon's file
  await rm(homeFile(home, "runtime"), { force: true });
}

/**
 * `svc doctor`'s look at runtime.json: a running daemon (its files may change while they are
 * read), or a stale file a killed daemon left; and its mode (it holds the per-boot token).
 */
export async function checkRuntimeFile(home: string): Promise<{ findings: DoctorFinding[]; running?: RuntimeInfo }> {
  const findings = await secretModeFinding(home, homeFile(home, "runtime"));
  const info = await readRuntimeInfo(home);
  if (!info) return { findings };
  if (isProcessAlive(info.pid)) {
    findings.push({
      severity: "info",
      file: "runtime.json",
      message: `a daemon is running (pid ${info.pid}): files may change while they are read, so a finding may be a write in progress`,
      fix: "for a still picture, stop it (svc stop) and run svc doctor again",
    });
    for (const w of info.warnings ?? [])
      findings.push({
        severity: "warn",
        file: "runtime.json",
        message: `the running daemon (pid ${info.pid}): ${w}`,
        fix: "set daemon.authToken, then restart the daemon",
      });
    return { findings, running: info };
  }
  findings.push({
    severity: "info",
    file: "runtime.json",
    message: `left by a daemon that is gone (pid ${info.pid}): it was killed rather than stopped`,
    fix: "nothing to do: the next start replaces it",
  });
  return { findings };
}
