/** Where svc lives and where adapter packages are installed and resolved from. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { svcHome } from "../storage/paths.js";

let cachedRoot: string | undefined;

/** svc's package name (scoped: the public registry's `svc` is someone else's), and the name it had before 0.20. */
const SVC_PACKAGE_NAMES = ["@svc/svc", "svc"];

/** The svc package's own root directory (the folder holding its package.json). */
export function svcRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = join(dir, "package.json");
    if (
      existsSync(pj) &&
      SVC_PACKAGE_NAMES.includes((JSON.parse(readFileSync(pj, "utf8")) as { name?: string }).name ?? "")
    )
      return (cachedRoot = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the svc package root above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/**
 * Where `svc adapters install` installs: a prefix the tool owns, `$SVC_HOME/adapters` (as oclif
 * keeps user plugins in its data directory), or `SVC_INSTALL_DIR` when set. Never svc's own
 * folder: installing must not rewrite the tool's package.json or lock file.
 */
export function installDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.SVC_INSTALL_DIR;
  return fromEnv && fromEnv.trim() !== "" ? resolve(fromEnv) : join(svcHome(env), "adapters");
}

/**
 * The places a package id is resolved from, in order: the install prefix, then svc's own
 * location (packages installed beside a global svc, such as `@svc/corpus-presets`), then the cwd.
 */
export interface ResolutionBase {
  from: "install" | "svc" | "cwd";
  dir: string;
}

export function resolutionBases(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ResolutionBase[] {
  const install = installDir(env);
  const root = svcRoot();
  return [
    { from: "install", dir: install },
    ...(resolve(root) !== install ? [{ from: "svc" as const, dir: root }] : []),
    { from: "cwd", dir: resolve(cwd) },
  ];
}
