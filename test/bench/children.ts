/**
 * The bench's child processes and temp dirs, ended and removed however the bench ends: a suite
 * stops what it started, and on exit, Ctrl-C (SIGINT) or SIGTERM whatever is left is killed
 * (SIGKILL) and the temp dirs removed.
 */
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";

const children = new Set<ChildProcess>();
const dirs = new Set<string>();
let installed = false;

function cleanUp(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  children.clear();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.clear();
}

function install(): void {
  if (installed) return;
  installed = true;
  process.once("exit", cleanUp);
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.once(signal, () => {
      process.stderr.write(`\nbench: ${signal}: killing the bench's child processes and removing its temp dirs\n`);
      cleanUp();
      process.exit(signal === "SIGINT" ? 130 : 143);
    });
}

/** Kills `child` (SIGKILL) if it is still running when the bench ends. */
export function trackChild<T extends ChildProcess>(child: T): T {
  install();
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Removes `dir` when the bench ends, unless {@link untrackDir} was called after removing it. */
export function trackDir(dir: string): string {
  install();
  dirs.add(dir);
  return dir;
}

export function untrackDir(dir: string): void {
  dirs.delete(dir);
}
