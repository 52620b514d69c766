/**
 * The readable form of a log line, for a terminal: `2026-11-27 01:54:34.123Z INFO  msg key=value …`.
 * The log file keeps the JSON line; a line that is not one of the logger's (a torn last line, a
 * stack trace a crash wrote to stderr) is shown as it is.
 */
import type { LogLevel } from "./logger.js";

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];

export interface LogEntry {
  t: string;
  level: LogLevel;
  msg: string;
  fields: Record<string, unknown>;
}

/** The logger's entry on this line, or undefined when the line is not one. */
export function parseLogLine(line: string): LogEntry | undefined {
  if (!line.startsWith("{")) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const { t, level, msg, ...fields } = v as Record<string, unknown>;
  if (typeof t !== "string" || typeof msg !== "string" || !LOG_LEVELS.includes(level as LogLevel)) return undefined;
  return { t, level: level as LogLevel, msg, fields };
}

const COLOURS: Record<LogLevel, number> = { debug: 2, info: 36, warn: 33, error: 31 };

function fieldValue(v: unknown): string {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return typeof v === "string" && (s === "" || /[\s"=]/.test(s)) ? JSON.stringify(s) : s;
}

export function formatLogEntry(e: LogEntry, options: { color?: boolean } = {}): string {
  const level = e.level.toUpperCase().padEnd(5);
  const fields = Object.entries(e.fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${fieldValue(v)}`);
  const lvl = options.color ? `\u001b[${COLOURS[e.level]}m${level}\u001b[0m` : level;
  return [e.t.replace("T", " "), lvl, e.msg, ...fields].join(" ");
}

/** The readable form of one line of the log (the line itself when it is not the logger's). */
export function formatLogLine(line: string, options: { color?: boolean } = {}): string {
  const e = parseLogLine(line);
  return e ? formatLogEntry(e, options) : line;
}
