import { spawn } from "node:child_process";
import {
  groupKiller,
  prependPath,
  SvcError,
  terminateAndWait,
  type AdapterSession,
  type SessionStartSpec,
  type SessionUpdateSink,
} from "../../core/plugin-api/index.js";
import type { PtyModule } from "./pty.js";

/** How long output a command wrote before exiting may take to arrive once it has exited. */
const CLOSE_DRAIN_MS = 200;

/** Starts a terminal session: in a pseudo-terminal when `pty` is given, else as a plain child. */
export async function startTerminal(
  spec: SessionStartSpec,
  sink: SessionUpdateSink,
  pty: PtyModule | undefined,
): Promise<AdapterSession> {
  const argv = spec.argv ?? [];
  if (argv.length === 0)
    throw new SvcError("invalid_input", "a terminal session needs a command: a preset with argv, or `-- <argv...>`");
  const [file, ...args] = argv as [string, ...string[]];
  const env = prependPath({ ...process.env, ...spec.env, SVC_SESSION_ID: spec.sessionId }, spec.pathPrepend) as Record<
    string,
    string
  >;
  if (pty) {
    let proc;
    try {
      proc = pty.spawn(file, args, { name: "xterm-256color", cols: 120, rows: 30, cwd: spec.cwd, env });
    } catch (err) {
      throw new SvcError("unavailable", `could not start ${file} in a pseudo-terminal: ${(err as Error).message}`);
    }
    let done = false;
    const exited = new Promise<void>((resolve) =>
      proc.onExit(({ exitCode, signal }) => {
        done = true;
        sink.exited({ code: exitCode, signal: signal ? String(signal) : null });
        resolve();
      }),
    );
    proc.onData((d) => sink.output("pty", d));
    return {
      kind: "terminal",
      pid: proc.pid,
      info: { transport: "pty", argv0: file },
      write: (d) => proc.write(d),
      stop: async () => {
        if (!done) await terminateAndWait((sig) => proc.kill(sig), exited);
      },
    };
  }
  // Its own process group, so stop can signal the command and everything it started.
  const child = spawn(file, args, { cwd: spec.cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        new SvcError(
          err.code === "ENOENT" ? "not_found" : "unavailable",
          `could not start ${file}: ${err.code === "ENOENT" ? "not found on PATH" : err.message}`,
        ),
      ),
    );
  });
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stdout.on("data", (d: string) => sink.output("stdout", d));
  child.stderr.on("data", (d: string) => sink.output("stderr", d));
  child.stdin.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
  let done = false;
  // The session ends when the command exits, not when its output closes: a background child
  // may hold the pipes open for as long as it runs. Output already written drains first.
  const exited = new Promise<void>((resolve) =>
    child.once("exit", async (code, signal) => {
      await Promise.race([closed, new Promise((r) => setTimeout(r, CLOSE_DRAIN_MS).unref())]);
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
      done = true;
      sink.exited({ code, signal });
      resolve();
    }),
  );
  const killGroup = groupKiller(child.pid!);
  return {
    kind: "terminal",
    pid: child.pid,
    info: { transport: "pipe", argv0: file },
    write: (d) => {
      if (child.stdin.writable) child.stdin.write(d);
    },
    stop: async () => {
      if (!done) await terminateAndWait(killGroup, exited);
    },
  };
}
