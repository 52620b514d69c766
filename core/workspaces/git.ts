import { execFile } from "node:child_process";
import { basename, dirname, resolve } from "node:path";
import { SvcError } from "../errors.js";

/** The environment git runs with: never prompts, never pages, never reads the user's template hooks. */
const GIT_ENV = { GIT_TERMINAL_PROMPT: "0", GIT_PAGER: "cat", GIT_OPTIONAL_LOCKS: "0" };

/**
 * Variables that point git at another repository than the one `cwd` is in (set, for example, when
 * svc runs from a git hook): with them, `git worktree remove` in one repository would act on another.
 */
const REPOSITORY_ENV = [
  "GIT_DIR",
  "GIT_WORK_TREE",
  "GIT_COMMON_DIR",
  "GIT_INDEX_FILE",
  "GIT_OBJECT_DIRECTORY",
  "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_NAMESPACE",
  "GIT_PREFIX",
];

function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...GIT_ENV };
  for (const name of REPOSITORY_ENV) delete env[name];
  return env;
}

/** Runs `git <args>` in `cwd` and returns its stdout; a failure is `unavailable` with git's own message. */
export function git(args: string[], cwd: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    execFile("git", args, { cwd, env: gitEnv(), maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolvePromise(stdout);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT") return reject(new SvcError("unavailable", "git is not on PATH; worktrees need git"));
      const msg = String(stderr || err.message)
        .trim()
        .split("\n")
        .slice(-3)
        .join(" ");
      reject(new SvcError("unavailable", `git ${args[0]} failed in ${cwd}: ${msg}`, { cause: err }));
    });
  });
}

/** `git <args>` that may fail: undefined instead of an error. */
export async function gitMaybe(args: string[], cwd: string): Promise<string | undefined> {
  return git(args, cwd).catch(() => undefined);
}

export interface RepoInfo {
  /** The main checkout (the directory holding the common `.git`). */
  repo: string;
  /** `basename(repo)`: the `<repoName>` of the layout. */
  repoName: string;
  /** The top level of the checkout `cwd` is in (the main checkout or a linked worktree). */
  top: string;
  /** The commit HEAD of that checkout points at; undefined in a repository without commits. */
  head?: string;
  /** The repository's common git directory (`<repo>/.git` for an ordinary checkout). */
  commonDir: string;
  /** The checkout's own git directory: the common one in the main checkout, `<common>/worktrees/<id>` in a linked worktree. */
  gitDir: string;
}

/** The git repository `cwd` lies in, or undefined when it is in none (or in a bare repository). */
export async function findRepo(cwd: string): Promise<RepoInfo | undefined> {
  // One git process in the common case; a repository without commits fails on HEAD and is asked again without it.
  const ask = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", "--git-dir"];
  const withHead = await gitMaybe([...ask, "HEAD^{commit}"], cwd);
  const out = withHead ?? (await gitMaybe(ask, cwd));
  if (!out) return undefined;
  const [top, common, gitDir, head] = out.trim().split("\n");
  if (!top || !common || !gitDir) return undefined;
  const repo = basename(common) === ".git" ? dirname(common) : top;
  return {
    repo: resolve(repo),
    repoName: basename(repo),
    top: resolve(top),
    commonDir: resolve(common),
    gitDir: resolve(gitDir),
    ...(withHead && head ? { head } : {}),
  };
}

/** The commit HEAD points at, or undefined in a repository without commits. */
export async function headCommit(cwd: string): Promise<string | undefined> {
  return (await gitMaybe(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd))?.trim() || undefined;
}

export async function branchExists(repo: string, branch: string): Promise<boolean> {
  return (await gitMaybe(["rev-parse", "--verify", "-q", `refs/heads/${branch}`], repo)) !== undefined;
}

/** Whether a checkout has uncommitted changes (untracked files count). */
export async function isDirty(path: string): Promise<boolean> {
  return (await git(["status", "--porcelain", "--untracked-files=normal"], path)).trim() !== "";
}

export interface GitWorktreeEntry {
  path: string;
  head?: string;
  branch?: string;
  prunable: boolean;
}

/** `git worktree list --porcelain`, parsed. */
export async function listGitWorktrees(repo: string): Promise<GitWorktreeEntry[]> {
  const out = await gitMaybe(["worktree", "list", "--porcelain"], repo);
  if (!out) return [];
  const entries: GitWorktreeEntry[] = [];
  for (const block of out.split("\n\n")) {
    const lines = block.split("\n").filter(Boolean);
    const path = lines.find((l) => l.startsWith("worktree "))?.slice(9);
    if (!path) continue;
    const head = lines.find((l) => l.startsWith("HEAD "))?.slice(5);
    const branch = lines
      .find((l) => l.startsWith("branch "))
      ?.slice(7)
      .replace(/^refs\/heads\//, "");
    entries.push({
      path,
      ...(head ? { head } : {}),
      ...(branch ? { branch } : {}),
      prunable: lines.some((l) => l.startsWith("prunable")),
    });
  }
  return entries;
}
