/** Running npm in the install location, with its progress shown on stderr. */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative } from "node:path";
import { SvcError } from "../../errors.js";
import { svcRoot } from "../../plugin-host/locations.js";
import { ensureSvcHome } from "../../storage/home-dir.js";
import { svcHome } from "../../storage/paths.js";

/**
 * Runs `npm <args> --prefix <dir>`. Peer dependencies are not installed (`--legacy-peer-deps`):
 * an older adapter may still name svc as its peer, and the host provides its plugin API at run
 * time (plugin-host/api-hooks.ts). The prefix gets a private package.json first, so npm installs
 * there and never into a package.json above it; a prefix inside `$SVC_HOME` (the default,
 * `$SVC_HOME/adapters`) first gets the home created 0700 (storage/home-dir.ts), never with the
 * umask's 0755. When the install location is svc's own root
 * (an installed svc given as SVC_INSTALL_DIR), dev dependencies are omitted.
 */
export function runNpm(args: string[], dir: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  ensurePrefix(dir, env);
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

/** A private package.json in the install prefix, so that npm treats it as the project root. */
function ensurePrefix(dir: string, env: NodeJS.ProcessEnv): void {
  if (existsSync(join(dir, "package.json"))) return;
  const inHome = relative(svcHome(env), dir);
  if (!inHome.startsWith("..") && !isAbsolute(inHome)) ensureSvcHome(env);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify(
      { name: "svc-adapters", private: true, description: "Adapter packages installed by svc adapters install" },
      null,
      2,
    ) + "\n",
  );
}
