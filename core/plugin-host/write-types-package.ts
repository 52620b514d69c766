/**
 * Build step (`npm run build`, after tsc): writes `dist/plugin-api-types/`, the types-only
 * package `@svc/plugin-api` that adapter authors install for TypeScript (`npm install -D
 * <svc>/dist/plugin-api-types`, or `svc adapters init --typescript`, which packs it into the new
 * package as `vendor/svc-plugin-api-<version>.tgz`: cli/adapters/pack-types.ts). It holds the
 * declaration files the plugin API's own declarations reach and no JavaScript: at run time the
 * host provides the module (api-hooks.ts), so a plugin never carries a copy of svc.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { SVC_VERSION } from "../version.js";
import { svcRoot } from "./locations.js";

/** The package's folder under the build output. */
export function typesPackageDir(root = svcRoot()): string {
  return join(root, "dist", "plugin-api-types");
}

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)"([^"]+)"/g;

/** The declaration files reached from `entry` through relative imports, and the bare specifiers they use. */
export function declarationClosure(entry: string): { files: string[]; external: Set<string> } {
  const files: string[] = [];
  const external = new Set<string>();
  const visit = (file: string): void => {
    if (files.includes(file)) return;
    if (!existsSync(file)) throw new Error(`declaration ${file} is missing: run tsc first`);
    files.push(file);
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1]!;
      if (spec.startsWith(".")) visit(resolve(dirname(file), spec.replace(/\.js$/, ".d.ts")));
      else if (!spec.startsWith("node:"))
        external.add(spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0]!);
    }
  };
  visit(entry);
  return { files, external };
}

export function writeTypesPackage(root = svcRoot()): string {
  const dist = join(root, "dist");
  const out = typesPackageDir(root);
  const { files, external } = declarationClosure(join(dist, "core", "plugin-api", "index.d.ts"));
  const hostPkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    dependencies?: Record<string, string>;
  };
  const dependencies: Record<string, string> = {};
  for (const name of [...external].sort()) {
    const range = hostPkg.dependencies?.[name];
    if (range) dependencies[name] = range; // a name only a doc comment mentions (e.g. svc/plugin-api) is not a dependency
  }
  rmSync(out, { recursive: true, force: true });
  for (const file of files) {
    const target = join(out, relative(dist, file));
    mkdirSync(dirname(target), { recursive: true });
    copyFileSync(file, target);
  }
  const types = "./core/plugin-api/index.d.ts";
  const pkg = {
    name: "@svc/plugin-api",
    version: SVC_VERSION,
    description: "Types of the svc plugin API. Types only: the running svc provides the module to every plugin.",
    license: "MIT",
    types,
    exports: { ".": { types }, "./package.json": "./package.json" },
    dependencies,
    peerDependencies: { "@types/node": ">=20" },
    peerDependenciesMeta: { "@types/node": { optional: true } },
  };
  writeFileSync(join(out, "package.json"), JSON.stringify(pkg, null, 2) + "\n");
  writeFileSync(
    join(out, "README.md"),
    "# @svc/plugin-api\n\nTypes of the svc plugin API for adapter authors. It contains no JavaScript: the running svc\nprovides `@svc/plugin-api` to every plugin it loads, whatever the plugin's install path.\nSee svc's docs/writing-an-adapter.md.\n",
  );
  return out;
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(new URL(import.meta.url).pathname)) {
  const out = writeTypesPackage();
  process.stdout.write(`wrote ${relative(process.cwd(), out) || out}\n`);
}
