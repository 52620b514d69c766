/**
 * Dotted get/set/unset on the RAW JSON tree of config.json (never on parsed output, so unknown
 * keys and "absent" vs `""` survive every write). Pure: each edit returns a new tree.
 *
 * Under record keys whose names may contain dots (`models.<role>`, `profileAliases.<slug>`,
 * `worktrees.provisionConcurrencyByRepo.<repo>`), the rest of the dotted key is one name:
 * `models.review.small` is the role `review.small`.
 */
import { SvcError } from "../errors.js";

const OPAQUE_RECORDS: readonly string[][] = [["models"], ["profileAliases"], ["worktrees", "provisionConcurrencyByRepo"]];
const FORBIDDEN = new Set(["__proto__", "prototype", "constructor"]);

type Tree = Record<string, unknown>;

/** Splits a dotted key into path segments. */
export function parseKey(dotted: string): string[] {
  const segs = dotted.split(".");
  if (dotted === "" || segs.some((s) => s === "")) {
    throw new SvcError("usage", `"${dotted}" is not a dotted key (e.g. daemon.port or models.review.small)`);
  }
  if (segs.some((s) => FORBIDDEN.has(s))) throw new SvcError("usage", `"${dotted}": the key names ${[...FORBIDDEN].join(", ")} are not allowed`);
  for (const prefix of OPAQUE_RECORDS) {
    if (segs.length > prefix.length + 1 && prefix.every((p, i) => segs[i] === p)) {
      return [...prefix, segs.slice(prefix.length).join(".")];
    }
  }
  return segs;
}

export function getAt(tree: unknown, path: readonly string[]): unknown {
  let cur: unknown = tree;
  for (const seg of path) {
    if (!isPlainObject(cur) || !Object.hasOwn(cur, seg)) return undefined;
    cur = cur[seg];
  }
  return cur;
}

/** A copy of `tree` with `value` at `path`; intermediate objects are created as needed. */
export function setAt(tree: Tree, path: readonly string[], value: unknown): Tree {
  const next = structuredClone(tree);
  let cur: Tree = next;
  path.slice(0, -1).forEach((seg, i) => {
    const child = cur[seg];
    if (child === undefined) cur[seg] = {};
    else if (!isPlainObject(child)) {
      throw new SvcError("invalid_input", `cannot set ${path.join(".")}: ${path.slice(0, i + 1).join(".")} holds ${kindOf(child)}, not an object`);
    }
    cur = cur[seg] as Tree;
  });
  cur[path.at(-1)!] = structuredClone(value);
  return next;
}

/** A copy of `tree` without the key at `path`; `removed` is false when it was not there. */
export function unsetAt(tree: Tree, path: readonly string[]): { tree: Tree; removed: boolean } {
  const parent = getAt(tree, path.slice(0, -1));
  if (!isPlainObject(parent) || !Object.hasOwn(parent, path.at(-1)!)) return { tree, removed: false };
  const next = structuredClone(tree);
  delete (getAt(next, path.slice(0, -1)) as Tree)[path.at(-1)!];
  return { tree: next, removed: true };
}

/** A command-line value: JSON when it parses, else the string itself (`asString` forces a string). */
export function parseCliValue(text: string, asString = false): unknown {
  if (asString) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function kindOf(v: unknown): string {
  return Array.isArray(v) ? "an array" : v === null ? "null" : `a ${typeof v}`;
}

function isPlainObject(v: unknown): v is Tree {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
