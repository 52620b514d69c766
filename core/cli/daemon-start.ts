/**
 * `svc start` / `svc serve --detach`: runs `svc serve` as a detached child (its own session and
 * process group, stdin and stdout on /dev/null, stderr appended to the log file), waits until its
 * runtime.json names it and `/health` answers, then returns. A daemon already running for this
 * home is reported and left alone (exit 0).
 */
import { spawn } from "node:child_process";
import { closeSync, fstatSync } from "node:fs";
import { open } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { SvcError } from "../errors.js";
import { baseUrlOf, liveRuntimeInfo, readRuntimeInfo, type RuntimeInfo } from "../daemon/runtime-file.js";
import { formatLogLine, parseLogLine } from "../runtime/log-format.js";
import { daemonLogPath, ensureLogsDir, openLogForAppend } from "../runtime/log-file.js";
import { noRoomToStart, roomFor } from "../storage/free-space.js";
import { svcHome } from "../storage/paths.js";
import { parseDurationFlag } from "./duration.js";
import { START_TIMEOUT_FLAG } from "./duration-flags.js";
import { println } from "./output.js";

export interface DetachFlags {
  port?: string;
  bind?: string;
  authToken?: string;
  authTokenFile?: string;
  profile?: string;
  connect?: string;
  /** `--store <url>`: handed to the child as SVC_STORE_URL, never in its arguments. */
  store?: string;
}

const DEFAULT_TIMEOUT_S = 60;
/** How many of the log's last lines a failed start shows. */
const TAIL_LINES = 20;

/** `svc serve`'s arguments for the child, from the flags given to `svc start`. */
function serveArgs(f: DetachFlags): string[] {
  const args = ["serve", "--detached-child"];
  const add = (flag: string, v: string | undefined) => v !== undefined && args.push(flag, v);
  add("--port", f.port);
  add("--bind", f.bind);
  add("--auth-token-file", f.authTokenFile === undefined ? undefined : resolve(f.authTokenFile));
  add("--auth-token", f.authToken);
  add("--profile", f.profile);
  add("--connect", f.connect);
  return args;
}

function started(verb: string, info: RuntimeInfo, log: string): string {
  return `svc daemon ${verb}, pid ${info.pid}, ${baseUrlOf(info)} (logs: ${log})`;
}

export async function startDetached(flags: DetachFlags, timeout: string | undefined): Promise<void> {
  const timeoutMs = timeout === undefined ? DEFAULT_TIMEOUT_S * 1000 : parseDurationFlag(timeout, START_TIMEOUT_FLAG);
  const home = svcHome();
  const log = daemonLogPath(home);
  const running = await liveRuntimeInfo(home);
  if (running) return println(started("already running", running, log));
  // The child's only voice is the log, which a full disk cannot take: the start's own check, here.
  const room = await roomFor(home, []);
  if (room && !room.ok) throw noRoomToStart(home, room);
  ensureLogsDir(home);
  const fd = openLogForAppend(log);
  const offset = fstatSync(fd).size;
  const script = process.argv[1];
  if (!script || !isAbsolute(script)) throw new SvcError("internal", "cannot tell which svc script to run");
  const child = spawn(process.execPath, [...process.execArgv, script, ...serveArgs(flags)], {
    detached: true,
    stdio: ["ignore", "ignore", fd],
    env: { ...process.env, SVC_HOME: home, ...(flags.store !== undefined ? { SVC_STORE_URL: flags.store } : {}) },
  });
  closeSync(fd);
  let exit: string | undefined;
  child.once("exit", (code, signal) => (exit = signal ? `killed by ${signal}` : `exit code ${code}`));
  const error = await new Promise<Error | undefined>((r) => {
    child.once("error", r);
    child.once("spawn", () => r(undefined));
  });
  if (error) throw new SvcError("internal", `cannot start the daemon: ${error.message}`);
  child.unref();
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const info = await readRuntimeInfo(home);
    if (info && info.pid === child.pid && (await answers(info))) return println(started("started", info, log));
    if (exit !== undefined) {
      // Another `svc start` may have won the race for this home: that is a running daemon too.
      const other = await liveRuntimeInfo(home);
      if (other) return println(started("already running", other, log));
      throw new SvcError("unavailable", `the daemon did not start (${exit})${await tail(log, offset)}`);
    }
    if (Date.now() > deadline)
      throw new SvcError(
        "timeout",
        `the daemon (pid ${child.pid}) did not answer within ${timeoutMs / 1000} s; it is left running: see \`svc logs\`, stop it with \`svc stop\`${await tail(log, offset)}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function answers(info: RuntimeInfo): Promise<boolean> {
  return fetch(`${baseUrlOf(info)}/health`, { signal: AbortSignal.timeout(2_000) })
    .then(async (r) => (await r.body?.cancel(), r.ok))
    .catch(() => false);
}

/** The warnings, errors and non-log lines the child wrote to the log since `offset`, readable. */
async function tail(path: string, offset: number): Promise<string> {
  const fh = await open(path, "r").catch(() => undefined);
  if (!fh) return "";
  try {
    const size = (await fh.stat()).size;
    if (size <= offset) return "";
    const buf = Buffer.alloc(Math.min(size - offset, 1024 * 1024));
    await fh.read(buf, 0, buf.length, size - buf.length);
    const lines = buf
      .toString("utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .filter((l) => {
        const e = parseLogLine(l);
        return !e || e.level === "warn" || e.level === "error";
      })
      .slice(-TAIL_LINES);
    return lines.length ? `; its log (${path}) says:\n${lines.map((l) => `  ${formatLogLine(l)}`).join("\n")}` : "";
  } finally {
    await fh.close();
  }
}
