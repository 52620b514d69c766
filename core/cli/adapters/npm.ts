/** Running npm in the install location, with its progress shown on stderr. */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { resolve as resolveModule } from "import-meta-resolve";
import { SvcError } from "../../errors.js";
import { svcRoot } from "../../plugin-host/locations.js";

/**
 * Runs `npm <args> --prefix <dir>`. Peer dependencies are not installed (`--legacy-peer-deps`):
 * the peer every adapter has, svc itself, is the host. When svc is an installed package (not a
 * source checkout) and the install location is its own root, dev dependencies are omitted.
 */
export function runNpm(args: string[], dir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const extra = ["--prefix", dir, "--no-audit", "--no-fund", "--legacy-peer-deps"];
  if (dir === svcRoot() && isInstalledPackage(dir)) extra.push("--omit=dev");
  const npm = process.platform === "win32" ? "npm.cmd" : "npm";
  return new Promise((resolve, reject) => {
    const child = spawn(npm, [...args, ...extra], { cwd: dir, env, stdio: ["ignore", process.stderr, process.stderr] });
    child.on("error", (err) => reject(new SvcError("unavailable", `cannot run npm: ${err.message}`)));
    child.on("close", (code) => {
      if (code === 0) resolve();
      else reject(new SvcError("internal", `npm ${args[0]} failed with exit code ${code} (its output is above)`));
    });
  });
}

function isInstalledPackage(root: string): boolean {
  const parent = dirname(root);
  return basename(parent) === "node_modules" || basename(dirname(parent)) === "node_modules";
}

/**
 * Makes `svc` itself resolvable (`import … from "svc/plugin-api"`) for packages installed in the
 * install location, by a `node_modules/svc` link to the running svc, unless it already resolves
 * from there (e.g. a global install, where svc sits beside its adapters' folder).
 */
export function ensureHostLink(dir: string): void {
  const modules = join(dir, "node_modules");
  if (existsSync(join(modules, "svc")) || resolvesFrom("svc/plugin-api", modules)) return;
  mkdirSync(modules, { recursive: true });
  symlinkSync(svcRoot(), join(modules, "svc"), "junction");
}

function resolvesFrom(specifier: string, dir: string): boolean {
  try {
    resolveModule(specifier, pathToFileURL(dir + "/").href);
    return true;
  } catch {
    return false;
  }
}
