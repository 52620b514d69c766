/**
 * SPEC.md `worktrees.isolation`, applied to every agent start:
 * - `never`: no worktree; an explicit `worktree` is rejected.
 * - an explicit `worktree` (a slug, or `true` for an automatic one): a new (or reused) tree.
 * - a spawn made by a session whose cwd lies in its parent's tree shares that tree (`inherit`).
 * - `always`: every other root spawn gets an automatic tree when its cwd is in a git repository
 *   (outside one it spawns plain); `on-request`: plain.
 */
import { SvcError } from "../errors.js";
import { formatSource, type ValueSource } from "../config/resolve.js";

export type Isolation = "always" | "on-request" | "never";

export type Placement = { kind: "plain" } | { kind: "inherit" } | { kind: "create"; slug?: string; explicit: boolean };

export function decidePlacement(
  mode: Isolation,
  source: ValueSource | undefined,
  worktree: string | true | undefined,
  spawn: { hasParent: boolean; inParentTree: boolean },
): Placement {
  if (mode === "never") {
    if (worktree !== undefined) {
      throw new SvcError(
        "invalid_input",
        `worktree ${JSON.stringify(worktree)} was asked for, but worktrees.isolation is "never" (${source ? formatSource(source) : "default"}); spawn without a worktree, or set worktrees.isolation to on-request or always`,
      );
    }
    return { kind: "plain" };
  }
  if (worktree !== undefined)
    return { kind: "create", ...(worktree === true ? {} : { slug: worktree }), explicit: true };
  if (spawn.inParentTree) return { kind: "inherit" };
  if (mode === "always" && !spawn.hasParent) return { kind: "create", explicit: false };
  return { kind: "plain" };
}
