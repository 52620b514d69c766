/**
 * Structured logging: one JSON line per entry on stderr (or a sink given at construction).
 * Fields carry ids and hosts, never a URL path or query, a body, a secret or a token.
 */
export type LogLevel = "debug" | "info" | "warn" | "error";

export type LogFields = Record<string, string | number | boolean | null | undefined>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export type LogSink = (line: string) => void;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(options: { level?: LogLevel; sink?: LogSink; base?: LogFields } = {}): Logger {
  const min = ORDER[options.level ?? (process.env.SVC_LOG_LEVEL as LogLevel) ?? "info"] ?? ORDER.info;
  const sink = options.sink ?? ((line: string) => process.stderr.write(line + "\n"));
  const base = options.base ?? {};
  const emit = (level: LogLevel, msg: string, fields?: LogFields) => {
    if (ORDER[level] < min) return;
    sink(JSON.stringify({ t: new Date().toISOString(), level, msg, ...base, ...fields }));
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    child: (fields) => createLogger({ level: options.level, sink, base: { ...base, ...fields } }),
  };
}

/** A logger that remembers its lines, for tests. */
export function createMemoryLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger({ level: "debug", sink: (l) => lines.push(l) });
  return Object.assign(logger, { lines });
}

const hosts = new Map<string, string>();

/**
 * The host of a URL, for log lines and error messages (never its path, query or credentials).
 * Remembers up to 1,024 URLs, then forgets them all and starts over (every delivery attempt names
 * its callback's host).
 */
export function hostOf(url: string): string {
  let host = hosts.get(url);
  if (host !== undefined) return host;
  try {
    host = new URL(url).host;
  } catch {
    host = "(invalid url)";
  }
  if (hosts.size >= 1024) hosts.clear();
  hosts.set(url, host);
  return host;
}
