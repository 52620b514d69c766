/**
 * Resolving a package id to its root directory with import-meta-resolve (DESIGN.md §4): resolve
 * the entry from `<base>/` and walk up to the package.json whose name matches. A package without
 * a JavaScript entry (manifest-only, e.g. corpus presets) is found by the same node_modules lookup
 * Node performs.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { resolve as resolveModule } from "import-meta-resolve";
import type { ResolutionBase } from "./locations.js";

export interface PackageJson {
  name?: string;
  version?: string;
  [key: string]: unknown;
}

export interface ResolvedPackage {
  id: string;
  dir: string;
  resolvedFrom: ResolutionBase["from"];
  packageJson: PackageJson;
}

const ID = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i;

/** Resolves `id` from each base in order; throws a message naming every place tried. */
export function resolvePackage(id: string, bases: ResolutionBase[]): ResolvedPackage {
  if (!ID.test(id)) throw new Error(`"${id}" is not a package name`);
  for (const base of bases) {
    const dir = findFrom(id, base.dir);
    if (dir) return { id, dir, resolvedFrom: base.from, packageJson: readPackageJson(dir) };
  }
  throw new Error(
    `package "${id}" is not installed: not found from ${bases.map((b) => `the ${b.from === "install" ? "install location" : b.from === "svc" ? "svc location" : "cwd"} (${b.dir})`).join(" nor from ")}`,
  );
}

function findFrom(id: string, baseDir: string): string | undefined {
  // A package with neither "main" nor "exports" (manifest-only, or a plugin package that names its
  // entries only in its manifest) is found by the node_modules lookup alone: resolving it as a
  // module would make import-meta-resolve print Node's DEP0151 deprecation warning on every load.
  const direct = nodeModulesLookup(id, baseDir);
  if (direct) {
    const pj = readPackageJson(direct);
    if (pj.main === undefined && pj.exports === undefined) return direct;
  }
  const parent = pathToFileURL(baseDir.endsWith("/") ? baseDir : baseDir + "/").href;
  try {
    const url = resolveModule(id, parent);
    if (url.startsWith("file:")) {
      const dir = packageDirAbove(fileURLToPath(url), id);
      if (dir) return dir;
    }
  } catch {
    // Not resolvable as a module; a manifest-only package is still found below.
  }
  return nodeModulesLookup(id, baseDir);
}

function packageDirAbove(file: string, name: string): string | undefined {
  let dir = dirname(file);
  for (;;) {
    const pj = join(dir, "package.json");
    if (existsSync(pj) && readPackageJson(dir).name === name) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

function nodeModulesLookup(id: string, baseDir: string): string | undefined {
  let dir = baseDir;
  for (;;) {
    const candidate = join(dir, "node_modules", id);
    if (existsSync(join(candidate, "package.json")) && readPackageJson(candidate).name === id)
      return realpathSync(candidate);
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

export function readPackageJson(dir: string): PackageJson {
  const parsed: unknown = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error(`${join(dir, "package.json")} is not a JSON object`);
  return parsed as PackageJson;
}
