import { readFileSync } from "node:fs";
import { readProcStatSync } from "../../core/sessions/process-mark.js";

/** Whether a process with this pid exists (signal 0 delivers nothing; it only checks). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Running: the process exists and is not a zombie (orphans may wait a while to be reaped). Linux (/proc). */
export function processRunning(pid: number): boolean {
  const s = readProcStatSync(pid);
  return Boolean(s && s.state !== "Z" && s.state !== "X");
}

/** A process's environment, from /proc/<pid>/environ (Linux). */
export function environOf(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, "utf8");
  return Object.fromEntries(
    raw
      .split("\0")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
}
