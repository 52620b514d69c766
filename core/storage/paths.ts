import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/**
 * File names under `$SVC_HOME`, exactly as SPEC.md gives them, of the files core reads and writes.
 * (Plugins cannot import core: the webhook target names its vault and outbox files itself.)
 */
export const FILES = {
  config: "config.json",
  sentinels: "sentinels.json",
  runtime: "runtime.json",
  credentials: "credentials.json",
  sentinelsDedup: "sentinels-dedup",
  sessions: "sessions",
  worktrees: "worktrees",
  plugins: "plugins",
  runs: "runs",
} as const;

/** `$SVC_HOME`, default `~/.svc`. A relative SVC_HOME resolves against the cwd. */
export function svcHome(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.SVC_HOME;
  if (fromEnv && fromEnv.trim() !== "") return isAbsolute(fromEnv) ? fromEnv : resolve(fromEnv);
  return join(homedir(), ".svc");
}

export function homeFile(home: string, name: keyof typeof FILES): string {
  return join(home, FILES[name]);
}

/** Expands a leading `~/` to the user's home directory. */
export function expandTilde(p: string): string {
  if (p === "~") return homedir();
  if (p.startsWith("~/")) return join(homedir(), p.slice(2));
  return p;
}
