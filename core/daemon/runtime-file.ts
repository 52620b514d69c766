/**
 * `$SVC_HOME/runtime.json`: how the CLI finds the running daemon (pid, port, per-boot token).
 * Written (0600) at start, removed at a clean stop; a file left by a killed daemon is stale when
 * its pid is gone.
 */
import { rm } from "node:fs/promises";
import { z } from "zod";
import { homeFile } from "../storage/paths.js";
import { readJsonFile, writeJsonFile } from "../storage/json-file.js";

export const runtimeInfoSchema = z.looseObject({
  pid: z.number().int(),
  port: z.number().int(),
  bind: z.string(),
  token: z.string(),
  startedAt: z.number(),
  version: z.string(),
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

export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The base URL for a daemon's runtime info (a wildcard bind is reached on loopback). */
export function baseUrlOf(info: Pick<RuntimeInfo, "bind" | "port">): string {
  const host = info.bind === "0.0.0.0" ? "127.0.0.1" : info.bind === "::" ? "[::1]" : info.bind.includes(":") ? `[${info.bind}]` : info.bind;
  return `http://${host}:${info.port}`;
}
