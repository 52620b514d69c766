#!/usr/bin/env node
/**
 * `npm run build` (and `npm pack`'s prepack, with --clean): compiles the TypeScript into dist/
 * and writes the types-only @svc/plugin-api package, saying what it does and how long it took, so
 * that a first run is never a silent minute: while a step runs, a line every 5 s says it still does. `--clean` empties dist/ first, so a tarball never
 * carries a file whose source is gone.
 */
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const started = performance.now();
const say = (line) => process.stdout.write(`${line}\n`);

const TICK_MS = 5_000;

/** Runs `node <args>` with its output shown, saying every 5 s that it still runs; exits on failure. */
async function run(what, args) {
  const t0 = performance.now();
  const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
  const tick = setInterval(
    () => say(`  … ${what} still running (${((performance.now() - t0) / 1000).toFixed(0)} s)`),
    TICK_MS,
  );
  const [code, signal] = await new Promise((resolve) => child.on("close", (c, s) => resolve([c, s])));
  clearInterval(tick);
  if (code !== 0) {
    process.stderr.write(`build failed: ${what} exited with ${code ?? signal}\n`);
    process.exit(code ?? 1);
  }
}

if (process.argv.includes("--clean")) {
  say("removing dist/ …");
  rmSync(new URL("../dist", import.meta.url), { recursive: true, force: true });
}
say("building svc (TypeScript → dist/) …");
await run("tsc", [createRequire(import.meta.url).resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"]);
await run("the types package", ["dist/core/plugin-host/write-types-package.js"]);
say(`built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
