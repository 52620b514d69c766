#!/usr/bin/env node
/**
 * `npm run build` (and `npm pack`'s prepack, with --clean): compiles the TypeScript into dist/
 * and writes the types-only @svc/plugin-api package, saying what it does and how long it took, so
 * that a first run is never a silent minute. `--clean` empties dist/ first, so a tarball never
 * carries a file whose source is gone.
 */
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const started = performance.now();
const say = (line) => process.stdout.write(`${line}\n`);

function run(what, args) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) {
    process.stderr.write(`build failed: ${what} exited with ${r.status ?? r.signal}\n`);
    process.exit(r.status ?? 1);
  }
}

if (process.argv.includes("--clean")) {
  say("removing dist/ …");
  rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
}
say("building svc (TypeScript → dist/) …");
run("tsc", [createRequire(import.meta.url).resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"]);
run("the types package", ["dist/core/plugin-host/write-types-package.js"]);
say(`built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
