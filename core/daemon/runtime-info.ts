/**
 * Reading `$SVC_HOME/runtime.json` (how the CLI finds the running daemon: pid, port, per-boot
 * token) with no schema library: `svc status` and `svc sentinel list` read it on the CLI's
 * fast path (core/cli/fast-path.ts), where loading zod alone costs more than the verb's budget.
 * Writing, removal and `svc doctor`'s check live in runtime-file.ts.
 */
import { readFile } from "node:fs/promises";
import { homeFile } from "../storage/paths.js";
import { readProcStatSync } from "../sessions/process-mark.js";

export interface RuntimeInfo {
  pid: number;
  port: number;
  bind: string;
  token: string;
  startedAt: number;
  version: string;
  /**
   * What the running daemon warns its owner of, for `svc doctor` and status views. None is written
   * since a daemon open to the network refuses to start (open-door.ts); read for older files.
   */
  warnings?: string[];
  [extra: string]: unknown;
}

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const isStr = (v: unknown): v is string => typeof v === "string";

/** `raw` as runtime info when it has every field with its type (other fields kept), else undefined. */
export function parseRuntimeInfo(raw: unknown): RuntimeInfo | undefined {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const ok =
    isInt(r.pid) &&
    isInt(r.port) &&
    isStr(r.bind) &&
    isStr(r.token) &&
    isNum(r.startedAt) &&
    isStr(r.version) &&
    (r.warnings === undefined || (Array.isArray(r.warnings) && r.warnings.every(isStr)));
  return ok ? (r as RuntimeInfo) : undefined;
}

export async function readRuntimeInfo(home: string): Promise<RuntimeInfo | undefined> {
  try {
    return parseRuntimeInfo(JSON.parse(await readFile(homeFile(home, "runtime"), "utf8")));
  } catch {
    return undefined; // absent, torn or foreign file: treat as no daemon
  }
}

/** The runtime info of a daemon whose process is alive, else undefined. */
export async function liveRuntimeInfo(home: string): Promise<RuntimeInfo | undefined> {
  const info = await readRuntimeInfo(home);
  return info && isProcessAlive(info.pid) ? info : undefined;
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
