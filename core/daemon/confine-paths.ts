/**
 * Where a caller who is not the daemon's owner may make the daemon work: a paired device with the
 * operate scope starts sessions, places worktrees and runs swarms only under
 * `pairing.allowedRoots`, never anywhere on disk. The owner (loopback, a bearer token) is not
 * confined. Paths are compared after resolving symlinks (of the deepest part that exists), so a
 * link inside a root cannot lead out of it.
 */
import { realpath } from "node:fs/promises";
import { dirname, isAbsolute, join, relative, resolve as resolvePath, sep } from "node:path";
import { SvcError } from "../errors.js";
import { describeCaller, reachOf } from "./principal.js";

export const ROOTS_KEY = "pairing.allowedRoots";

/** `paths`: the request's path fields by name (an absent one is named so it can be asked for). */
export async function confineToRoots(
  principal: string,
  roots: readonly string[],
  paths: Record<string, string | undefined>,
  required: readonly string[] = [],
): Promise<void> {
  if (reachOf(principal) === "owner") return;
  const { who } = describeCaller(principal);
  if (roots.length === 0) {
    throw new SvcError(
      "forbidden",
      `${who} may start work only under ${ROOTS_KEY}, which is empty: the daemon's owner can set it (svc config set ${ROOTS_KEY} '["/home/me/src"]')`,
    );
  }
  const real = await Promise.all(roots.map((r) => resolveReal(r)));
  for (const [field, value] of Object.entries(paths)) {
    if (value === undefined) {
      if (required.includes(field))
        throw new SvcError(
          "forbidden",
          `${who} must give ${field}: a directory under ${ROOTS_KEY} (${roots.join(", ")})`,
        );
      continue;
    }
    if (!isAbsolute(value))
      throw new SvcError("invalid_input", `${field} must be an absolute path (got ${JSON.stringify(value)})`);
    const target = await resolveReal(value);
    if (!real.some((root) => inside(target, root))) {
      throw new SvcError(
        "forbidden",
        `${field} ${value} is not under ${ROOTS_KEY} (${roots.join(", ")}): ${who} may start work only there`,
      );
    }
  }
}

function inside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (rel !== ".." && !rel.startsWith(".." + sep) && !isAbsolute(rel));
}

/** The real path of `p`, or of its deepest existing ancestor with the rest appended. */
async function resolveReal(p: string): Promise<string> {
  const abs = resolvePath(p);
  try {
    return await realpath(abs);
  } catch {
    const parent = dirname(abs);
    if (parent === abs) return abs;
    return join(await resolveReal(parent), abs.slice(parent.length).replace(/^[/\\]+/, ""));
  }
}
