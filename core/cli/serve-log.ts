/**
 * The foreground daemon's log: every line to `$SVC_HOME/logs/daemon.log` (JSON, rotated), and to
 * stderr, readable when stderr is a terminal and the same JSON otherwise (supervisors and tests
 * parse it). A detached daemon (`svc start`) writes the file only.
 */
import { formatLogLine } from "../runtime/log-format.js";
import { DeferredLogFile, RotatingLogFile, type LogLimits } from "../runtime/log-file.js";
import { createLogger, type Logger } from "../runtime/logger.js";
import { useColor } from "./output.js";

export interface DaemonLog {
  logger: Logger;
  file: RotatingLogFile;
  /** Start writing the file (with the lines held until now). */
  attach(limits: () => LogLimits): void;
}

export function daemonLog(home: string, options: { console: boolean }): DaemonLog {
  const file = new RotatingLogFile(home);
  const deferred = new DeferredLogFile(file);
  const stderr = process.stderr;
  const readable = stderr.isTTY === true;
  const color = readable && useColor(stderr);
  const toConsole = options.console
    ? (line: string) => void stderr.write((readable ? formatLogLine(line, { color }) : line) + "\n")
    : undefined;
  const logger = createLogger({
    sink: (line) => {
      toConsole?.(line);
      deferred.write(line);
    },
  });
  return {
    logger,
    file,
    attach: (limits) => {
      file.useLimits(limits);
      deferred.attach();
    },
  };
}
