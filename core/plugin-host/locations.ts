/** Where svc lives and where adapter packages are installed and resolved from. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

let cachedRoot: string | undefined;

/** The svc package's own root directory (the folder holding its package.json). */
export function svcRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pj = join(dir, "package.json");
    if (existsSync(pj) && (JSON.parse(readFileSync(pj, "utf8")) as { name?: string }).name === "svc") return (cachedRoot = dir);
    const up = dirname(dir);
    if (up === dir) throw new Error(`cannot find the svc package root above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
}

/**
 * The tool's install location: `SVC_INSTALL_DIR` when set, else the svc package root (so
 * adapters installed with `svc adapters install` live beside svc itself).
 */
export function installDir(env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env.SVC_INSTALL_DIR;
  return fromEnv && fromEnv.trim() !== "" ? resolve(fromEnv) : svcRoot();
}

/** The places a package id is resolved from, in order: the install location, then the cwd. */
export interface ResolutionBase {
  from: "install" | "cwd";
  dir: string;
}

export function resolutionBases(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): ResolutionBase[] {
  return [
    { from: "install", dir: installDir(env) },
    { from: "cwd", dir: resolve(cwd) },
  ];
}
