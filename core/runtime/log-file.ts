/**
 * The daemon's log file, `$SVC_HOME/logs/daemon.log` (directory 0700, file 0600): one JSON line
 * per entry, rotated by size. Writes are synchronous appends (`O_APPEND`), one `write` per line,
 * so a line is never split across files nor lost at exit; rotation happens between two writes.
 * Rotation renames `daemon.log.(k-1)` to `daemon.log.k` … `daemon.log` to `daemon.log.1`, the
 * rename onto `daemon.log.<files>` dropping the oldest: svc touches no other name in the folder.
 */
import { closeSync, fchmodSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";

export const LOGS_DIR = "logs";
export const LOG_FILE = "daemon.log";

export interface LogLimits {
  /** A file is rotated before a line would take it past this size. */
  maxBytes: number;
  /** Rotated files kept: daemon.log.1 … daemon.log.<files>. */
  files: number;
}

export const DEFAULT_LOG_LIMITS: LogLimits = { maxBytes: 10 * 1024 * 1024, files: 5 };

export function logsDir(home: string): string {
  return join(home, LOGS_DIR);
}

export function daemonLogPath(home: string): string {
  return join(logsDir(home), LOG_FILE);
}

/** `daemon.log.<n>` beside `path`. */
export function rotatedPath(path: string, n: number): string {
  return `${path}.${n}`;
}

/** Creates the logs folder (0700) if missing; an existing folder keeps its mode. */
export function ensureLogsDir(home: string): string {
  const dir = logsDir(home);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** Opens `path` for appending, 0600 from its first byte. */
export function openLogForAppend(path: string): number {
  const fd = openSync(path, "a", 0o600);
  fchmodSync(fd, 0o600);
  return fd;
}

export class RotatingLogFile {
  private fd: number | undefined;
  private size = 0;
  private failed = false;
  /** Said once: a rotation that fails leaves the file growing. */
  private rotateFailed = false;

  constructor(
    readonly home: string,
    private limits: () => LogLimits = () => DEFAULT_LOG_LIMITS,
  ) {}

  get path(): string {
    return daemonLogPath(this.home);
  }

  /** Where the limits come from from now on (the daemon's configuration, once it is read). */
  useLimits(limits: () => LogLimits): void {
    this.limits = limits;
  }

  /** Appends one line (without its newline). Never throws: a log that cannot be written must not stop the daemon. */
  write(line: string): void {
    const data = line + "\n";
    const bytes = Buffer.byteLength(data);
    try {
      if (this.fd === undefined) this.open();
      const { maxBytes } = this.limits();
      if (this.size > 0 && this.size + bytes > maxBytes) this.rotateOrGrow();
      writeSync(this.fd!, data);
      this.size += bytes;
      this.failed = false;
    } catch (err) {
      this.closeFd();
      // Said once per run of failures, on stderr (the log is what failed).
      if (!this.failed) process.stderr.write(`svc: cannot write ${this.path}: ${(err as Error).message}\n`);
      this.failed = true;
    }
  }

  close(): void {
    this.closeFd();
  }

  private open(): void {
    ensureLogsDir(this.home);
    this.fd = openLogForAppend(this.path);
    this.size = fstatSync(this.fd).size;
  }

  /** Rotates; when a rename fails (a folder where a file should be, no permission), the file grows on instead. */
  private rotateOrGrow(): void {
    this.closeFd();
    const files = Math.max(1, Math.floor(this.limits().files));
    try {
      for (let n = files - 1; n >= 1; n--) renameIfThere(rotatedPath(this.path, n), rotatedPath(this.path, n + 1));
      renameIfThere(this.path, rotatedPath(this.path, 1));
    } catch (err) {
      if (!this.rotateFailed) process.stderr.write(`svc: cannot rotate ${this.path}: ${(err as Error).message}\n`);
      this.rotateFailed = true;
    }
    this.open();
  }

  private closeFd(): void {
    if (this.fd === undefined) return;
    try {
      closeSync(this.fd);
    } catch {
      /* already gone */
    }
    this.fd = undefined;
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}

/**
 * A sink that holds lines until it is given the file: the foreground daemon writes its log file
 * only once it has started (a start that fails, e.g. on a busy port, writes nothing under
 * $SVC_HOME), then the lines of its start-up, then every line. Holds at most `max` lines.
 */
export class DeferredLogFile {
  private held: string[] | undefined = [];
  constructor(
    private readonly file: RotatingLogFile,
    private readonly max = 10_000,
  ) {}

  write(line: string): void {
    if (this.held === undefined) this.file.write(line);
    else if (this.held.length < this.max) this.held.push(line);
  }

  /** Writes the held lines, then every line from now on, to the file. */
  attach(): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const l of held) this.file.write(l);
  }
}
