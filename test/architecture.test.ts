/**
 * The folder tree tells the truth about who may use whom (issue 13, DESIGN.md §2): plugins import
 * only the plugin API, the core never imports a plugin, and no module imports itself back through
 * others (type-only imports included: they are dependencies a reader follows too).
 */
import { readFileSync, readdirSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./support/paths.js";

function sources(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts"))
    .map((e) => relative(REPO_ROOT, join(e.parentPath, e.name)));
}

/**
 * Relative specifiers a module depends on: `import … from`, `export … from`, a bare `import "…"`,
 * and `import("…")` (a dynamic import, or an inline type such as `token<import("./x.js").X>`,
 * which is as much a dependency as a static one).
 */
const IMPORTS = [
  /^\s*(?:import|export)\s+(?:type\s+)?[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/gm,
  /^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm,
  /\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g,
];

export function importsOf(text: string): string[] {
  return IMPORTS.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]!));
}

function graph(): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const file of [...sources("core"), ...sources("plugins")]) {
    const text = readFileSync(join(REPO_ROOT, file), "utf8");
    const deps = importsOf(text).map((spec) =>
      relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), spec.replace(/\.js$/, ".ts"))),
    );
    g.set(file, deps);
  }
  return g;
}

/** Every cycle's members (strongly connected components of more than one module, or a self-import). */
function cycles(g: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!g.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (g.get(v) ?? []).includes(v)) out.push(comp.sort());
    }
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** Imports across the host/plugin line: core -> plugins, or plugins -> core other than the plugin API. */
function crossings(g: Map<string, string[]>): string[] {
  const out: string[] = [];
  for (const [from, deps] of g) {
    for (const to of deps) {
      if (from.startsWith("core/") && to.startsWith("plugins/")) out.push(`${from} -> ${to}`);
      if (from.startsWith("plugins/") && to.startsWith("core/") && !to.startsWith("core/plugin-api/"))
        out.push(`${from} -> ${to}`);
    }
  }
  return out;
}

describe("architecture", () => {
  const g = graph();

  it("plugins import only the plugin API of the core; the core imports no plugin", () => {
    expect(crossings(g)).toEqual([]);
  });

  it("has no import cycles", () => {
    expect(cycles(g)).toEqual([]);
  });

  it("finds a cycle and a crossing when there is one (the checks can fail)", () => {
    expect(
      cycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", ["a.ts"]],
          ["c.ts", ["a.ts"]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts"]]);
    expect(
      crossings(
        new Map([
          ["core/cli/acp/listing.ts", ["plugins/acp/catalog.ts"]],
          ["plugins/acp/stderr-tail.ts", ["core/config/secrets.ts", "core/plugin-api/index.ts"]],
        ]),
      ),
    ).toEqual([
      "core/cli/acp/listing.ts -> plugins/acp/catalog.ts",
      "plugins/acp/stderr-tail.ts -> core/config/secrets.ts",
    ]);
    expect(g.size).toBeGreaterThan(100);
    const text = [
      'import type { A } from "./a.js";',
      "import {\n  b,\n  c,\n} from '../b.js';",
      'export * from "./c.js";',
      'import "./side-effect.js";',
      'export const T = token<import("./inline-type.js").T>("t");',
      'const m = await import("../dynamic.js");',
      'import { z } from "zod";',
    ].join("\n");
    expect(importsOf(text).sort()).toEqual([
      "../b.js",
      "../dynamic.js",
      "./a.js",
      "./c.js",
      "./inline-type.js",
      "./side-effect.js",
    ]);
  });
});
