/**
 * `svc logs [-f] [--level <l>] [--since <when>] [-n <lines>] [--json]`: the daemon's log file
 * (`$SVC_HOME/logs/daemon.log`, and the rotated daemon.log.N when --since or -n reach back),
 * readable or as its JSON lines. `--follow` prints lines as they are written, across rotations
 * (the file renamed: the rest of the old one, then the new one) and truncation. A line that is not
 * a log entry (torn, or a crash's stack on the daemon's stderr) is shown as it is.
 */
import { type FSWatcher, watch } from "node:fs";
import { open, readdir, stat, type FileHandle } from "node:fs/promises";
import { SvcError } from "../errors.js";
import { LOG_LEVELS, formatLogLine, parseLogLine } from "../runtime/log-format.js";
import { LOG_FILE, daemonLogPath, logsDir } from "../runtime/log-file.js";
import type { LogLevel } from "../runtime/logger.js";
import { svcHome } from "../storage/paths.js";
import { parseTimeFlag } from "./duration.js";
import { SINCE_FLAG } from "./duration-flags.js";
import { useColor, usageError } from "./output.js";

export interface LogsOptions {
  follow?: boolean;
  level?: string;
  since?: string;
  json?: boolean;
  lines?: string;
}

const DEFAULT_LINES = 100;

interface Filter {
  /** Keeps this line (and says, for a non-entry line, whether the entry before it was kept by time). */
  keep(line: string): boolean;
}

function lineFilter(min: number, since: number | undefined): Filter {
  let lastInTime = since === undefined;
  return {
    keep(line) {
      const e = parseLogLine(line);
      if (!e) return lastInTime;
      const t = Date.parse(e.t);
      lastInTime = since === undefined || !(t < since);
      return lastInTime && LOG_LEVELS.indexOf(e.level) >= min;
    },
  };
}

/** The rotated files present, oldest first (daemon.log.5 … daemon.log.1). */
async function rotatedFiles(home: string): Promise<string[]> {
  const names = await readdir(logsDir(home)).catch(() => [] as string[]);
  return names
    .map((n) => ({ n, k: new RegExp(`^${LOG_FILE.replace(".", "\\.")}\\.(\\d+)$`).exec(n)?.[1] }))
    .filter((x) => x.k !== undefined)
    .sort((a, b) => Number(b.k) - Number(a.k))
    .map((x) => `${logsDir(home)}/${x.n}`);
}

async function readText(fh: FileHandle, from: number, to: number): Promise<string> {
  if (to <= from) return "";
  const buf = Buffer.alloc(to - from);
  const { bytesRead } = await fh.read(buf, 0, buf.length, from);
  return buf.subarray(0, bytesRead).toString("utf8");
}

async function readFileText(path: string): Promise<string> {
  const fh = await open(path, "r").catch(() => undefined);
  if (!fh) return "";
  try {
    return await readText(fh, 0, (await fh.stat()).size);
  } finally {
    await fh.close();
  }
}

function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export async function printLogs(o: LogsOptions): Promise<void> {
  if (o.level !== undefined && !LOG_LEVELS.includes(o.level as LogLevel))
    throw usageError(`--level ${JSON.stringify(o.level)} is not a level; give one of ${LOG_LEVELS.join(", ")}`);
  if (o.lines !== undefined && !/^\d+$/.test(o.lines.trim()))
    throw usageError(`--lines ${JSON.stringify(o.lines)} is not a number of lines; give a whole number, e.g. 50`);
  const min = o.level === undefined ? 0 : LOG_LEVELS.indexOf(o.level as LogLevel);
  const since = o.since === undefined ? undefined : parseTimeFlag(o.since, SINCE_FLAG, Date.now());
  const max = o.lines !== undefined ? Number(o.lines) : since === undefined ? DEFAULT_LINES : Number.POSITIVE_INFINITY;
  const home = svcHome();
  const path = daemonLogPath(home);
  const color = useColor(process.stdout);
  const show = (line: string) => process.stdout.write((o.json ? line : formatLogLine(line, { color })) + "\n");

  const current = await open(path, "r").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw new SvcError("unavailable", `cannot read ${path}: ${err.message}`);
  });
  const rotated = await rotatedFiles(home);
  if (!current && rotated.length === 0)
    throw new SvcError(
      "not_found",
      `no daemon log at ${path} yet: the daemon writes it once it has started (\`svc start\` or \`svc serve\`)`,
    );
  try {
    const end = current ? (await current.stat()).size : 0;
    // Newest file first, until enough lines are kept (every file when --since reaches back).
    let text = current ? await readText(current, 0, end) : "";
    const kept: string[] = [];
    for (let i = rotated.length; ; i--) {
      const filter = lineFilter(min, since);
      kept.unshift(...splitLines(text).filter((l) => filter.keep(l)));
      if (i === 0 || (since === undefined && kept.length >= max)) break;
      text = await readFileText(rotated[i - 1]!);
    }
    for (const l of max === Number.POSITIVE_INFINITY ? kept : kept.slice(Math.max(0, kept.length - max))) show(l);
    if (o.follow) await follow(path, current, end, lineFilter(min, undefined), show);
  } finally {
    await current?.close().catch(() => undefined);
  }
}

/**
 * Prints what is appended to `path` from `pos` on, until SIGINT/SIGTERM. Wakes on the folder's
 * change events, and at least every half second (a watch can miss events on some filesystems).
 */
async function follow(
  path: string,
  start: FileHandle | undefined,
  pos: number,
  filter: Filter,
  show: (line: string) => void,
): Promise<void> {
  let fh = start;
  let ino = fh ? (await fh.stat()).ino : undefined;
  let partial = "";
  let wake: (() => void) | undefined;
  let stopped = false;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(logsDir(svcHome()), () => wake?.());
  } catch {
    /* polling only */
  }
  const stop = () => {
    stopped = true;
    wake?.();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const drain = async () => {
    if (!fh) return;
    const size = (await fh.stat()).size;
    if (size < pos) pos = 0; // truncated
    const text = partial + (await readText(fh, pos, size));
    pos = size;
    const lines = text.split("\n");
    partial = lines.pop() ?? "";
    for (const l of lines) if (filter.keep(l)) show(l);
  };
  try {
    while (!stopped) {
      await drain();
      const now = await stat(path).catch(() => undefined);
      if (now && now.ino !== ino) {
        // Renamed away (rotated) or replaced: the old file is complete now (the writer opened the
        // new one after the rename); its rest, a torn last line as it is, then the new file.
        await drain();
        if (partial !== "" && filter.keep(partial)) show(partial);
        partial = "";
        await fh?.close().catch(() => undefined);
        fh = await open(path, "r").catch(() => undefined);
        ino = fh ? (await fh.stat()).ino : undefined;
        pos = 0;
        continue;
      }
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 500).unref();
      });
      wake = undefined;
    }
  } finally {
    watcher?.close();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    await fh?.close().catch(() => undefined);
  }
}
