/**
 * Running a worktree's heavy phases, in order: `copy` (files git does not carry, from the source
 * checkout), `install` (the dependency command), `setup` (the hooks). A failing phase is a
 * `provision_failed` error with the phase, the command and the tail of its output; the tree stays.
 */
import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { copyFile, lstat, mkdir, readdir } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import picomatch from "picomatch";
import { SvcError } from "../errors.js";
import type { ProvisionPlan } from "./provision-file.js";

const TAIL_LINES = 20;
const KEEP_BYTES = 64 * 1024;
const SKIP_DIRS = new Set([".git", "node_modules"]);

export interface ProvisionFailure {
  phase: "copy" | "install" | "setup";
  command: string;
  outputTail: string;
  exitCode?: number | null;
}

/** Runs every phase; `onPhase` is told each phase as it starts. */
export async function runProvision(
  plan: ProvisionPlan,
  source: string,
  tree: string,
  onPhase: (phase: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  if (plan.copy.length) {
    onPhase("copy");
    await copyGlobs(plan.copy, source, tree).catch((err: Error) => {
      throw failure({ phase: "copy", command: `copy ${plan.copy.join(" ")}`, outputTail: err.message });
    });
  }
  const env = { ...process.env, SVC_WORKTREE_SOURCE: source, SVC_WORKTREE_PATH: tree };
  if (plan.install) {
    onPhase("install");
    await runCommand("install", plan.install, tree, env, plan.timeoutMs, signal);
  }
  for (const hook of plan.setup) {
    onPhase("setup");
    await runCommand("setup", hook, tree, env, plan.timeoutMs, signal);
  }
}

function failure(f: ProvisionFailure): SvcError {
  const tail = f.outputTail.trim() ? `:\n${f.outputTail.trimEnd()}` : " (no output)";
  return new SvcError(
    "provision_failed",
    `worktree provisioning failed in phase ${f.phase}: \`${f.command}\`${f.exitCode !== undefined ? ` exited ${f.exitCode}` : ""}${tail}`,
    { details: { ...f } },
  );
}

/** Copies the files of `source` matching `globs` (paths relative to it, dotfiles included) into `tree`, keeping files the tree already has. */
export async function copyGlobs(globs: string[], source: string, tree: string): Promise<number> {
  const match = picomatch(globs, { dot: true });
  let copied = 0;
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const abs = join(dir, e.name);
      const rel = relative(source, abs);
      if (e.isDirectory()) {
        if (!SKIP_DIRS.has(e.name)) await walk(abs);
      } else if (e.isFile() && match(rel)) {
        const to = join(tree, rel);
        // Anything already at that path (a file, a symlink, even a dangling one) is the tree's own: kept.
        if (await lstat(to).catch(() => undefined)) continue;
        await mkdir(dirname(to), { recursive: true });
        await copyFile(abs, to, constants.COPYFILE_EXCL);
        copied++;
      }
    }
  };
  await walk(source);
  return copied;
}

/** Runs `sh -c command` in its own process group; the group is killed at the time limit or when `signal` aborts (the session was stopped). */
function runCommand(
  phase: "install" | "setup",
  command: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let out = "";
    const keep = (d: Buffer) => {
      out += d.toString("utf8");
      if (out.length > KEEP_BYTES * 2) out = out.slice(-KEEP_BYTES);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    let timedOut = false;
    const killGroup = () => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    timer.unref();
    signal?.addEventListener("abort", killGroup, { once: true });
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(failure({ phase, command, outputTail: err.message }));
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", killGroup);
      if (signal?.aborted) return reject(signal.reason);
      if (code === 0 && !timedOut) return resolve();
      const tail = out
        .split("\n")
        .slice(-TAIL_LINES - 1)
        .join("\n");
      reject(
        failure({
          phase,
          command,
          outputTail: timedOut ? `${tail}\n(timed out after ${timeoutMs / 1000}s)` : tail,
          exitCode: code,
        }),
      );
    });
  });
}
