/**
 * The OpenTelemetry SDK loads only when a session is traced: its packages are imported (as values)
 * only by the modules the gate imports dynamically, and no module imports those statically.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../support/paths.js";

const LAZY = ["core/tracing/session-tracer.ts", "core/tracing/otel.ts"];

const files = readdirSync(join(REPO_ROOT, "core"), { withFileTypes: true, recursive: true })
  .filter((e) => e.isFile() && e.name.endsWith(".ts"))
  .map((e) => relative(REPO_ROOT, join(e.parentPath, e.name)));

/** Static value imports (`import x from`, `import {x} from`, `export … from`), not `import type`. */
const valueImports = (text: string) =>
  [...text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^'"]*?from\s+['"]([^'"]+)['"]/gm)].map((m) => m[1]!);

describe("tracing loads nothing of OpenTelemetry until a session is traced", () => {
  it("only the lazily imported modules import @opentelemetry packages as values", () => {
    const importers = files.filter((f) =>
      valueImports(readFileSync(join(REPO_ROOT, f), "utf8")).some((s) => s.startsWith("@opentelemetry/")),
    );
    expect(importers.sort()).toEqual(LAZY.slice().sort());
  });

  it("the lazy modules are imported statically only by each other; the gate imports them with import()", () => {
    for (const f of files.filter((x) => !LAZY.includes(x))) {
      const statics = valueImports(readFileSync(join(REPO_ROOT, f), "utf8"));
      expect(
        statics.filter((s) => /\/(session-tracer|otel)\.js$/.test(s)),
        f,
      ).toEqual([]);
    }
    expect(readFileSync(join(REPO_ROOT, "core/tracing/gate.ts"), "utf8")).toContain('import("./session-tracer.js")');
  });
});
