/**
 * Dotted paths into the configuration: splitting a dotted key into segments, and reading, setting
 * or removing the value at a path of segments in a JSON tree, listing its leaves (or finding the
 * zod schema of a key).
 * `svc config get|set|unset`, the resolver, the loader's messages and the docs generator all walk
 * paths through here.
 *
 * Only own members are followed, so a path never reaches into `Object.prototype`; a key (and a
 * write) may not name `__proto__`, `prototype` or `constructor`.
 */
import { z } from "zod";
import { SvcError } from "../errors.js";

type Tree = Record<string, unknown>;

/** Segment names no key may use. */
const FORBIDDEN = new Set(["__proto__", "prototype", "constructor"]);

/**
 * Records whose own keys may contain dots (`models.<role>`, `profileAliases.<slug>`,
 * `worktrees.provisionConcurrencyByRepo.<repo>`): under them the rest of a dotted key is one name,
 * so `models.review.small` is the role `review.small`.
 */
const OPAQUE_RECORDS: readonly string[][] = [
  ["models"],
  ["profileAliases"],
  ["worktrees", "provisionConcurrencyByRepo"],
];

/** Splits a dotted key or pattern the code spells itself (no checks; see {@link parseKey} for a user's key). */
export function splitKey(dotted: string): string[] {
  return dotted.split(".");
}

/** Splits a user's dotted key into path segments; throws `usage` for an empty segment or a forbidden name. */
export function parseKey(dotted: string): string[] {
  const segs = splitKey(dotted);
  if (dotted === "" || segs.some((s) => s === "")) {
    throw new SvcError("usage", `"${dotted}" is not a dotted key (e.g. daemon.port or models.review.small)`);
  }
  if (segs.some((s) => FORBIDDEN.has(s)))
    throw new SvcError("usage", `"${dotted}": the key names ${[...FORBIDDEN].join(", ")} are not allowed`);
  for (const prefix of OPAQUE_RECORDS) {
    if (segs.length > prefix.length + 1 && prefix.every((p, i) => segs[i] === p)) {
      return [...prefix, segs.slice(prefix.length).join(".")];
    }
  }
  return segs;
}

/**
 * The value at a config key's path: keys name members of objects only (an array is a value, never
 * walked into, as {@link setAt} never writes into one); `undefined` when absent.
 */
export function getAt(tree: unknown, path: readonly string[]): unknown {
  return walk(tree, path, false);
}

/**
 * The value at a path that may index arrays (a zod issue path such as `acpAgents.x.bin_args.1`),
 * for naming what was found there; `undefined` when absent.
 */
export function valueAt(tree: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  return walk(tree, path, true);
}

/** A copy of `tree` with `value` at `path`; intermediate objects are created as needed. */
export function setAt(tree: Tree, path: readonly string[], value: unknown): Tree {
  const banned = path.find((s) => FORBIDDEN.has(s));
  if (banned !== undefined)
    throw new SvcError("invalid_input", `cannot set ${path.join(".")}: the key name ${banned} is not allowed`);
  const next = structuredClone(tree);
  let cur: Tree = next;
  path.slice(0, -1).forEach((seg, i) => {
    const child = Object.hasOwn(cur, seg) ? cur[seg] : undefined;
    if (child === undefined) cur[seg] = {};
    else if (!isPlainObject(child)) {
      throw new SvcError(
        "invalid_input",
        `cannot set ${path.join(".")}: ${path.slice(0, i + 1).join(".")} holds ${kindOf(child)}, not an object`,
      );
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

/**
 * The leaves of the tree under `path`, in document order, as `[path, value]`: every value that is
 * not a non-empty object (an array and an empty object are leaves). The root itself is never one.
 * `svc config show` lists these keys, and the resolver records a source for each, so the two agree.
 */
export function leaves(value: unknown, path: readonly string[] = []): Array<[string[], unknown]> {
  if (isPlainObject(value) && (path.length === 0 || Object.keys(value).length > 0)) {
    return Object.entries(value).flatMap(([k, v]) => leaves(v, [...path, k]));
  }
  return path.length === 0 ? [] : [[[...path], value]];
}

/** The schema of the field at `path` under the object schema `root` (through `.optional()`); throws when there is none. */
export function schemaAt(root: z.ZodType, path: readonly string[]): z.ZodType {
  let cur = root;
  for (const seg of path) {
    let obj = cur;
    while (obj instanceof z.ZodOptional) obj = obj.unwrap() as z.ZodType;
    if (!(obj instanceof z.ZodObject) || !Object.hasOwn(obj.shape, seg))
      throw new Error(`the configuration schema has no key ${path.join(".")}`);
    cur = obj.shape[seg] as z.ZodType;
  }
  return cur;
}

function walk(tree: unknown, path: ReadonlyArray<PropertyKey>, arrays: boolean): unknown {
  let cur: unknown = tree;
  for (const seg of path) {
    const container = isPlainObject(cur) || (arrays && Array.isArray(cur));
    if (!container || !Object.hasOwn(cur as object, seg)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[seg];
  }
  return cur;
}

function kindOf(v: unknown): string {
  return Array.isArray(v) ? "an array" : v === null ? "null" : `a ${typeof v}`;
}

function isPlainObject(v: unknown): v is Tree {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
