/**
 * The built-in redactors (docs/redaction.md) and the `secrets` floor every redaction ends with.
 * Each is a pure function of its input and what it was built with.
 */
import { sep } from "node:path";
import { REDACTED } from "../plugin-api/redaction.js";
import type { RedactionInput } from "./redaction.js";
import { redactSecretShapes } from "./shapes.js";

/** A redactor: the text as it may leave, or `undefined` to drop it. */
export type RedactFn = (input: RedactionInput) => string | undefined;

/** The default redactor's slug: no content leaves. */
export const DEFAULT_REDACTOR = "metadata";
export const BUILTIN_REDACTORS = ["secrets", "paths", "metadata"] as const;
export type BuiltinRedactor = (typeof BUILTIN_REDACTORS)[number];

export function isBuiltinRedactor(slug: string): slug is BuiltinRedactor {
  return (BUILTIN_REDACTORS as readonly string[]).includes(slug);
}

/**
 * The `secrets` floor: the exact values svc holds (`held`, longest first), then every known key and
 * token shape, replaced by `[redacted]`.
 */
export function secretsFloor(held: readonly string[]): (text: string) => string {
  return (text) => {
    let out = text;
    for (const v of held) if (out.includes(v)) out = out.split(v).join(REDACTED);
    return redactSecretShapes(out);
  };
}

/** The directories the `paths` redactor shortens, and what each becomes. */
export interface PathNames {
  home?: string;
  svcHome?: string;
  /** The session's workspace (its worktree, else its cwd), by session id. */
  workspaceOf?(sessionId: string): string | undefined;
}

/** `text` with each of `dirs` (longest first) replaced by its short name where it starts a path. */
export function shortenPaths(text: string, dirs: ReadonlyArray<[dir: string, name: string]>): string {
  let out = text;
  for (const [dir, name] of [...dirs].filter(([d]) => d.length > 1).sort((a, b) => b[0].length - a[0].length)) {
    const bare = dir.endsWith(sep) ? dir.slice(0, -1) : dir;
    // The directory itself or anything under it, not a longer name that starts the same (`/home/al` in `/home/alice`).
    out = out.replace(new RegExp(`${escapeRegExp(bare)}(?=$|[${escapeRegExp(sep)}\\s"'\`:;,)\\]}])`, "g"), name);
  }
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

/** The built-in redactor of `slug` (the floor runs after it, in the service). */
export function builtinRedactor(slug: BuiltinRedactor, paths: PathNames): RedactFn {
  switch (slug) {
    case "secrets":
      return (input) => input.text;
    case "metadata":
      return (input) => (input.content ? undefined : input.text);
    case "paths":
      return (input) => {
        const dirs: Array<[string, string]> = [];
        const workspace = input.sessionId !== undefined ? paths.workspaceOf?.(input.sessionId) : undefined;
        if (workspace) dirs.push([workspace, "<workspace>"]);
        if (paths.svcHome) dirs.push([paths.svcHome, "<svc-home>"]);
        if (paths.home) dirs.push([paths.home, "~"]);
        return shortenPaths(input.text, dirs);
      };
  }
}
