/**
 * `$SVC_HOME/runtime.json`: how the CLI finds the running daemon (pid, port, per-boot token).
 * Written (0600) at start, removed at a clean stop; a file left by a killed daemon is stale when
 * its pid is gone.
 */
import { rm } from "node:fs/promises";
import { z } from "zod";
import type { DoctorFinding } from "../plugin-api/doctor.js";
import { secretModeFinding } from "../storage/file-check.js";
import { homeFile } from "../storage/paths.js";
import { readJsonFile, writeJsonFile } from "../storage/json-file.js";
import { readProcStatSync } from "../sessions/process-mark.js";

export const runtimeInfoSchema = z.looseObject({
  pid: z.number().int(),
  port: z.number().int(),
  bind: z.string(),
  token: z.string(),
  startedAt: z.number(),
  version: z.string(),
  /** What the running daemon warns its owner of (open-door.ts), for `svc doctor` and status views. */
  warnings: z.array(z.string()).optional(),
});

export type RuntimeInfo = z.infer<typeof runtimeInfoSchema>;

export async function readRuntimeInfo(home: string): Promise<RuntimeInfo | undefined> {
  let raw: unknown;
  try {
    raw = await readJsonFile(homeFile(home, "runtime"));
  } catch {
    return undefined; // torn or foreign file: treat as no daemon
  }
  const parsed = runtimeInfoSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** The runtime info of a daemon whose process is alive, else undefined. */
export async function liveRuntimeInfo(home: string): Promise<RuntimeInfo | undefined> {
  const info = await readRuntimeInfo(home);
  return info && isProcessAlive(info.pid) ? info : undefined;
}

export async function writeRuntimeInfo(home: string, info: RuntimeInfo): Promise<void> {
  await writeJsonFile(homeFile(home, "runtime"), info, { mode: 0o600 });
}

export async function removeRuntimeInfo(home: string, pid: number): Promise<void> {
  const info = await readRuntimeInfo(home);
  if (info && info.pid !== pid) return; // another daemon's file
  await rm(homeFile(home, "runtime"), { force: true });
}

/** The process exists and is not a zombie (an exited daemon whose parent has not reaped it yet; Linux's /proc). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
  const state = readProcStatSync(pid)?.state;
  return state !== "Z" && state !== "X";
}

/** The base URL for a daemon's runtime info (a wildcard bind is reached on loopback). */
export function baseUrlOf(info: Pick<RuntimeInfo, "bind" | "port">): string {
  const host =
    info.bind === "0.0.0.0"
      ? "127.0.0.1"
      : info.bind === "::"
        ? "[::1]"
        : info.bind.includes(":")
          ? `[${info.bind}]`
          : info.bind;
  return `http://${host}:${info.port}`;
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
      fix: "for a still picture, stop it (kill its pid) and run svc doctor again",
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
