/**
 * Where worktrees go and what they are called: `<root>/<repoName>/<slug>`, one branch
 * `svc/<slug>` per worktree. The root is, in SPEC.md's order, the `--root` flag, then
 * `SVC_WORKTREES_ROOT`, then `worktrees.root`, then `$SVC_HOME/worktrees` (the last three are the
 * config resolver's `worktrees.root`).
 */
import { isAbsolute, join, resolve } from "node:path";
import { SvcError } from "../errors.js";
import { expandTilde } from "../storage/paths.js";

/** A slug: a letter or digit, then up to 62 of letters, digits, `.`, `_`, `-`; no `..`, not ending in `.lock`. */
const SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export const BRANCH_PREFIX = "svc/";

export function checkSlug(slug: string): string {
  if (!SLUG.test(slug) || slug.includes("..") || slug.endsWith(".lock")) {
    throw new SvcError(
      "invalid_input",
      `worktree slug ${JSON.stringify(slug)} is invalid: use 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit (no '..', not ending in '.lock')`,
    );
  }
  return slug;
}

/** An automatic slug: the label (or adapter) made slug-safe, then 8 characters of the session id's random part. */
export function autoSlug(base: string, sessionId: string): string {
  const stem =
    base
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, "-")
      .replace(/^[^a-z0-9]+/, "")
      .replace(/-+$/, "")
      .slice(0, 40) || "session";
  return `${stem}-${sessionId.slice(-8).toLowerCase()}`;
}

export function branchFor(slug: string): string {
  return BRANCH_PREFIX + slug;
}

/** The root: a `--root` flag (relative to `cwd`, `~/` expanded) over the resolved `worktrees.root`. */
export function worktreeRoot(resolvedRoot: string, flag?: string, cwd = process.cwd()): string {
  if (flag === undefined || flag === "") return resolvedRoot;
  const p = expandTilde(flag);
  return isAbsolute(p) ? p : resolve(cwd, p);
}

export function worktreePath(root: string, repoName: string, slug: string): string {
  return join(root, repoName, slug);
}
