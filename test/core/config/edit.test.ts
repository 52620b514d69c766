import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { getAt, parseCliValue, parseKey, setAt, unsetAt } from "../../../core/config/edit.js";

describe("dotted keys", () => {
  it.each([
    ["daemon.port", ["daemon", "port"]],
    ["models.review.small", ["models", "review.small"]],
    ["profileAliases.a.b", ["profileAliases", "a.b"]],
    ["worktrees.provisionConcurrencyByRepo.~/src/my.repo", ["worktrees", "provisionConcurrencyByRepo", "~/src/my.repo"]],
    ["defaults.adapters.claude.auth.mode", ["defaults", "adapters", "claude", "auth", "mode"]],
  ])("%s", (key, path) => expect(parseKey(key)).toEqual(path));

  it.each(["", "a..b", ".a", "a.", "a.__proto__.b", "constructor"])("rejects %j", (key) => {
    expect(() => parseKey(key)).toThrow();
  });
});

describe("raw-tree edits", () => {
  it("set creates intermediates, keeps siblings and never mutates its input", () => {
    const tree = { daemon: { port: 1, x: "keep" }, other: [1] };
    const next = setAt(tree, ["daemon", "bind"], "0.0.0.0");
    expect(next).toEqual({ daemon: { port: 1, x: "keep", bind: "0.0.0.0" }, other: [1] });
    expect(tree.daemon).toEqual({ port: 1, x: "keep" });
    expect(setAt({}, ["a", "b", "c"], 1)).toEqual({ a: { b: { c: 1 } } });
  });

  it("set through a non-object is an error naming both keys", () => {
    expect(() => setAt({ daemon: 5 }, ["daemon", "port"], 1)).toThrow(/cannot set daemon\.port: daemon holds a number/);
  });

  it("unset reports whether anything was removed", () => {
    expect(unsetAt({ a: { b: 1, c: 2 } }, ["a", "b"])).toEqual({ tree: { a: { c: 2 } }, removed: true });
    expect(unsetAt({ a: { c: 2 } }, ["a", "b"]).removed).toBe(false);
    expect(unsetAt({ a: 1 }, ["a", "b"]).removed).toBe(false);
  });

  it("values: JSON when it parses, else the string; --string forces a string", () => {
    expect(parseCliValue("8080")).toBe(8080);
    expect(parseCliValue("true")).toBe(true);
    expect(parseCliValue('{"a":1}')).toEqual({ a: 1 });
    expect(parseCliValue("hello world")).toBe("hello world");
    expect(parseCliValue("8080", true)).toBe("8080");
    expect(parseCliValue('""')).toBe("");
  });

  const key = fc.constantFrom("a", "b", "c", "d");
  const path = fc.array(key, { minLength: 1, maxLength: 3 });
  it("property: set then get returns the value and leaves every other leaf alone", () => {
    fc.assert(
      fc.property(fc.object({ maxDepth: 3 }), path, fc.jsonValue(), (tree, p, v) => {
        let next: Record<string, unknown>;
        try {
          next = setAt(tree as Record<string, unknown>, p, v);
        } catch {
          return;
        }
        expect(getAt(next, p)).toEqual(v);
        const { tree: back } = unsetAt(next, p);
        expect(getAt(back, p)).toBeUndefined();
        for (const k of Object.keys(tree)) if (k !== p[0]) expect(back[k]).toEqual((tree as Record<string, unknown>)[k]);
      }),
    );
  });
});
