import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  getAt,
  leaves,
  parseKey,
  schemaAt,
  setAt,
  splitKey,
  unsetAt,
  valueAt,
} from "../../../core/config/dotted-path.js";
import { configSchema, daemonSchema, extJudgeSchema, worktreesSchema } from "../../../core/config/schema.js";

describe("dotted keys", () => {
  it.each([
    ["daemon.port", ["daemon", "port"]],
    ["models.review.small", ["models", "review.small"]],
    ["profileAliases.a.b", ["profileAliases", "a.b"]],
    [
      "worktrees.provisionConcurrencyByRepo.~/src/my.repo",
      ["worktrees", "provisionConcurrencyByRepo", "~/src/my.repo"],
    ],
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
        for (const k of Object.keys(tree))
          if (k !== p[0]) expect(back[k]).toEqual((tree as Record<string, unknown>)[k]);
      }),
    );
  });
});

describe("edge cases every caller shares", () => {
  it("keys name members of objects only; an issue path also indexes arrays", () => {
    const tree = { adapters: ["a", "b"], acpAgents: { x: { bin_args: ["--ok", 5] } } };
    expect(getAt(tree, ["adapters", "1"])).toBeUndefined();
    expect(valueAt(tree, ["adapters", 1])).toBe("b");
    expect(valueAt(tree, ["acpAgents", "x", "bin_args", 1])).toBe(5);
    expect(valueAt(tree, ["adapters", 2])).toBeUndefined();
  });

  it("reads never reach into Object.prototype", () => {
    expect(getAt({ daemon: {} }, ["daemon", "constructor"])).toBeUndefined();
    expect(getAt({}, ["toString"])).toBeUndefined();
    expect(valueAt({ a: [] }, ["a", "map"])).toBeUndefined();
    expect(getAt(JSON.parse('{"__proto__": {"x": 1}}'), ["__proto__", "x"])).toBe(1);
  });

  it("a set under an inherited name creates the member (nothing is there in the file)", () => {
    expect(setAt({}, ["daemon", "toString", "x"], 1)).toEqual({ daemon: { toString: { x: 1 } } });
  });

  it("a set naming __proto__, prototype or constructor is refused and pollutes nothing", () => {
    for (const bad of ["__proto__", "prototype", "constructor"]) {
      expect(() => setAt({}, [bad, "polluted"], 1)).toThrow(/not allowed/);
      expect(() => setAt({ a: {} }, ["a", bad], { polluted: 1 })).toThrow(/not allowed/);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("splitKey does not check: empty segments stay (keys the code spells never have them)", () => {
    expect(splitKey("defaults.adapters.*.auth.token")).toEqual(["defaults", "adapters", "*", "auth", "token"]);
    expect(splitKey("a..b")).toEqual(["a", "", "b"]);
  });
});

describe("leaves", () => {
  it("lists every value that is not a non-empty object, in document order; an empty object or array is a leaf, the root never", () => {
    const tree = {
      daemon: { port: 1, allowedOrigins: [] },
      models: { "review.small": { model: "m" } },
      profiles: {},
      x: null,
    };
    expect(leaves(tree)).toEqual([
      [["daemon", "port"], 1],
      [["daemon", "allowedOrigins"], []],
      [["models", "review.small", "model"], "m"],
      [["profiles"], {}],
      [["x"], null],
    ]);
    expect(leaves({})).toEqual([]);
    expect(leaves(5)).toEqual([]);
  });

  it("under a path, the path prefixes each leaf, and an empty object there is itself a leaf", () => {
    expect(leaves({ a: 1 }, ["p"])).toEqual([[["p", "a"], 1]]);
    expect(leaves({}, ["p"])).toEqual([[["p"], {}]]);
  });
});

describe("schemaAt", () => {
  it("finds a key's field schema through optional sections (the very object the section declares)", () => {
    expect(schemaAt(configSchema, ["daemon", "port"])).toBe(daemonSchema.shape.port);
    expect(schemaAt(configSchema, ["worktrees", "root"])).toBe(worktreesSchema.shape.root);
    expect(schemaAt(configSchema, ["extJudge", "apiKey"])).toBe(extJudgeSchema.shape.apiKey);
    expect(schemaAt(z.object({ a: z.number() }), [])).toBeInstanceOf(z.ZodObject);
  });

  it("throws for a key the schema does not have", () => {
    expect(() => schemaAt(configSchema, ["daemon", "nope"])).toThrow(/no key daemon\.nope/);
    expect(() => schemaAt(configSchema, ["daemon", "port", "x"])).toThrow(/no key daemon\.port\.x/);
    expect(() => schemaAt(configSchema, ["daemon", "constructor"])).toThrow();
  });
});
