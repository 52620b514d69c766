/**
 * Recognising a session's process after the daemon that started it died (SPEC.md "Sessions":
 * sessions of an earlier daemon life). A pid alone is not enough: once the process is gone the
 * kernel hands the number to someone else. So `session.started` records the process's start
 * time (/proc/<pid>/stat field 22, in clock ticks since boot) and the boot id: a process with
 * that pid, that start time and that boot is the one the daemon started. Linux only; where there
 * is no /proc nothing is recorded and nothing is ever recognised (so never signalled).
 */
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";

/** The fields of /proc/<pid>/stat the marks use. */
export interface ProcStat {
  /** `R`, `S`, `D`, …; `Z` (zombie) and `X` (dead) are not running. */
  state: string;
  ppid: number;
  pgrp: number;
  /** Field 22: when the process started, in clock ticks since boot. */
  startTime: number;
}

/** What `session.started` records about the session's process (its `process` field). */
export interface ProcessMark {
  startTime: number;
  bootId: string;
  /** The process leads its own process group (a detached command, a pty): the whole group is signalled. */
  group: boolean;
}

/** What `session.started` records about the daemon that started the session (its `daemon` field). */
export interface DaemonMark {
  pid: number;
  /** Absent where there is no /proc. */
  startTime?: number;
  bootId?: string;
}

/** Parses /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses: fields are counted from its last `)`. */
export function parseProcStat(text: string): ProcStat | undefined {
  const close = text.lastIndexOf(")");
  if (close < 0) return undefined;
  const f = text
    .slice(close + 2)
    .trim()
    .split(" ");
  // f[0] is field 3 (state), so field n is f[n - 3].
  const [state, ppid, pgrp, startTime] = [f[0], Number(f[1]), Number(f[2]), Number(f[19])];
  if (!state || !Number.isInteger(ppid) || !Number.isInteger(pgrp) || !Number.isInteger(startTime)) return undefined;
  return { state, ppid, pgrp, startTime };
}

function statPath(pid: number): string {
  return `/proc/${pid}/stat`;
}

/** The process's stat, or undefined when it does not exist or there is no /proc. Synchronous: a /proc read does not block. */
export function readProcStatSync(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(statPath(pid), "utf8"));
  } catch {
    return undefined;
  }
}

export async function readProcStat(pid: number): Promise<ProcStat | undefined> {
  const text = await readFile(statPath(pid), "utf8").catch(() => undefined);
  return text === undefined ? undefined : parseProcStat(text);
}

let boot: { id?: string } | undefined;

/** This boot's id (/proc/sys/kernel/random/boot_id), read once; undefined where there is none. */
export function bootId(): string | undefined {
  if (!boot) {
    try {
      boot = { id: readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim() || undefined };
    } catch {
      boot = {};
    }
  }
  return boot.id;
}

/**
 * The mark of a process this daemon just started, or undefined when it cannot be taken: no
 * /proc, or the pid is not (or no longer) this process's child. A child is not reaped until this
 * process waits for it, so while its parent is us the pid cannot belong to anyone else.
 */
export function markProcess(pid: number | undefined): ProcessMark | undefined {
  const id = bootId();
  if (pid === undefined || !id) return undefined;
  const stat = readProcStatSync(pid);
  if (!stat || stat.ppid !== process.pid) return undefined;
  return { startTime: stat.startTime, bootId: id, group: stat.pgrp === pid };
}

let self: DaemonMark | undefined;

/** This daemon's own mark. */
export function markDaemon(): DaemonMark {
  if (!self) {
    const id = bootId();
    const startTime = id ? readProcStatSync(process.pid)?.startTime : undefined;
    self = { pid: process.pid, ...(startTime !== undefined ? { startTime, bootId: id } : {}) };
  }
  return self;
}

function notRunning(stat: ProcStat | undefined): boolean {
  return !stat || stat.state === "Z" || stat.state === "X";
}

/** True when `pid` is running and is the process `mark` describes (same start time, same boot). */
export async function isMarkedProcess(pid: number, mark: ProcessMark): Promise<boolean> {
  if (!bootId() || mark.bootId !== bootId()) return false;
  const stat = await readProcStat(pid);
  return !notRunning(stat) && stat!.startTime === mark.startTime;
}

/**
 * True when `pid` runs but is not the process `mark` describes (another start time or boot): the
 * pid was reused. Synchronous, for a check right before a signal is sent.
 */
export function pidReused(pid: number, mark: ProcessMark): boolean {
  const stat = readProcStatSync(pid);
  return !notRunning(stat) && (stat!.startTime !== mark.startTime || mark.bootId !== bootId());
}

/**
 * True when the daemon `mark` describes may still be running (so its sessions are not orphans):
 * with /proc, the pid runs with the same start time in this boot; without, the pid exists and is
 * not this process (a reused pid then only delays the cleanup).
 */
export async function daemonMayRun(mark: DaemonMark): Promise<boolean> {
  if (mark.startTime !== undefined && bootId()) {
    if (mark.bootId !== bootId()) return false;
    const stat = await readProcStat(mark.pid);
    return !notRunning(stat) && stat!.startTime === mark.startTime;
  }
  if (mark.pid === process.pid) return false;
  try {
    process.kill(mark.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * True while any process of the group `pgid` runs (zombies do not count: where nothing reaps
 * orphans promptly they linger after they are dead). Reads /proc only when the leader is gone.
 */
export async function groupRunning(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  if (!notRunning(await readProcStat(pgid))) return true;
  const pids = (await readdir("/proc").catch(() => [] as string[])).filter((n) => /^\d+$/.test(n));
  for (const pid of pids) {
    const stat = await readProcStat(Number(pid));
    if (stat?.pgrp === pgid && !notRunning(stat)) return true;
  }
  return false;
}
