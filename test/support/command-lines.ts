/**
 * Watching what `ps` shows: the CLI as a child process whose stdin stays open while a test reads
 * every process's command line (/proc/<pid>/cmdline and `ps -eww`), to prove a secret fed on
 * stdin never appears there.
 */
import { execFile, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect } from "vitest";
import { childEnv, makeTempHome, type CliResult } from "./cli.js";
import { CLI_PATH } from "./paths.js";

/**
 * The CLI as a child process under umask 022 (the usual one, under which a file created without a
 * mode is 0644), so a test of the modes svc chooses does not depend on the runner's umask.
 */
export function startCli(home: string, args: string[]): ChildProcessWithoutNullStreams {
  return spawn("/bin/sh", ["-c", 'umask 022 && exec "$@"', "sh", process.execPath, CLI_PATH, ...args], {
    env: childEnv(home),
    stdio: ["pipe", "pipe", "pipe"],
  });
}

/** The child's exit code and everything it printed, once it has closed. */
export function finished(child: ChildProcessWithoutNullStreams): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/**
 * A temporary SVC_HOME with its config.json path, and `svc(args, input)`: the CLI run there (by
 * {@link startCli}) with `input` on stdin, then stdin closed. The caller removes it with `cleanup`.
 */
export async function cliHome(prefix: string) {
  const h = await makeTempHome(prefix);
  const file = join(h.home, "config.json");
  const svc = (args: string[], input = ""): Promise<CliResult> => {
    const child = startCli(h.home, args);
    const done = finished(child);
    child.stdin.end(input);
    return done;
  };
  return { ...h, file, svc, readConfig: async () => JSON.parse(await readFile(file, "utf8")) as Record<string, any> };
}

/**
 * Registers `afterAll` in the enclosing scope and returns a maker of {@link cliHome}s, each removed
 * when the scope ends.
 */
export function useCliHomes(prefix: string): () => ReturnType<typeof cliHome> {
  const homes: Array<{ cleanup(): Promise<void> }> = [];
  afterAll(() => Promise.all(homes.map((h) => h.cleanup())));
  return async () => {
    const h = await cliHome(prefix);
    homes.push(h);
    return h;
  };
}

/** Every process's command line, read from /proc/<pid>/cmdline (arguments joined by spaces). */
export async function allCommandLines(): Promise<Map<number, string>> {
  const lines = new Map<number, string>();
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const text = await readFile(`/proc/${name}/cmdline`, "utf8").catch(() => undefined);
    if (text !== undefined) lines.set(Number(name), text.split("\0").join(" "));
  }
  return lines;
}

/** Resolves once `pid` runs `node <CLI_PATH> …` (after the shell's exec); rejects when the child exits first. */
export async function runningCli(child: ChildProcessWithoutNullStreams): Promise<string> {
  const exited = new Promise<never>((_, reject) =>
    child.on("exit", (code) => reject(new Error(`the CLI exited (code ${code}) before it was seen running`))),
  );
  const seen = (async () => {
    for (;;) {
      const text = await readFile(`/proc/${child.pid}/cmdline`, "utf8").catch(() => "");
      const argv = text.split("\0");
      if (argv[0] === process.execPath && argv[1] === CLI_PATH) return argv.join(" ");
      await new Promise((r) => setImmediate(r));
    }
  })();
  return Promise.race([seen, exited]);
}

/**
 * While `child` runs the CLI (its stdin still open), no process's command line holds `secret`,
 * neither in /proc nor as `ps -eww` prints it, and the child's own is what /proc says. Returns the
 * child's command line.
 */
export async function expectSecretOffEveryCommandLine(
  child: ChildProcessWithoutNullStreams,
  secret: string,
): Promise<string> {
  const own = await runningCli(child);
  const lines = await allCommandLines();
  expect(lines.get(child.pid!)).toBe(own);
  for (const [pid, line] of lines) expect(line, `process ${pid}`).not.toContain(secret);
  const ps = await promisify(execFile)("ps", ["-eww", "-o", "pid=,args="], { maxBuffer: 64 * 1024 * 1024 });
  expect(ps.stdout).toContain(`${child.pid} `);
  expect(ps.stdout).not.toContain(secret);
  return own;
}
