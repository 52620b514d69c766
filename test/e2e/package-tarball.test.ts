/**
 * Issue 28, "first run": svc ships what it needs. `npm pack` builds (its prepack script) into a
 * tarball that carries the built dist/ and the manifests, and nothing of the sources or the tests;
 * what is unpacked from it runs (`svc --version`, `svc-corpus --version`, `svc serve`) with no
 * build step. The runtime dependencies come from this checkout's node_modules (symlinked), since a
 * test may not reach the registry and npm's cache does not hold them offline.
 */
import { execFileSync, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SVC_VERSION } from "../../core/version.js";
import { childEnv } from "../support/cli.js";
import { REPO_ROOT } from "../support/paths.js";
import { until } from "../support/until.js";

let tmp: string;
let files: string[];
let pkg: string;

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "svc-tarball-"));
  // The suite has just built dist/; --ignore-scripts keeps this test from rebuilding it under the
  // other tests (prepack is checked below).
  const packed = JSON.parse(
    execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", tmp], {
      cwd: REPO_ROOT,
      encoding: "utf8",
    }),
  ) as Array<{ filename: string; files: Array<{ path: string }> }>;
  files = packed[0]!.files.map((f) => f.path);
  execFileSync("tar", ["-xzf", join(tmp, packed[0]!.filename), "-C", tmp]);
  pkg = join(tmp, "package");
  await symlink(join(REPO_ROOT, "node_modules"), join(pkg, "node_modules"));
}, 60_000);
afterAll(() => rm(tmp, { recursive: true, force: true }));

describe("npm pack: a tarball that runs without building", () => {
  it("prepack builds (from a clean dist/), and npm run build says what it does", async () => {
    const pj = JSON.parse(await readFile(join(REPO_ROOT, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
      bin: Record<string, string>;
    };
    expect(pj.scripts.prepack).toBe("node scripts/build.mjs --clean");
    expect(pj.scripts.build).toBe("node scripts/build.mjs");
    const script = await readFile(join(REPO_ROOT, "scripts", "build.mjs"), "utf8");
    expect(script).toContain("building svc (TypeScript → dist/) …");
    expect(script).toContain("built in ");
  });

  it("carries the built CLI, every built-in's entry, the manifests and the types package; no sources, tests or bench", async () => {
    const pj = JSON.parse(await readFile(join(pkg, "package.json"), "utf8")) as { bin: Record<string, string> };
    expect(pj.bin).toEqual({ svc: "dist/core/cli/svc.js", "svc-corpus": "dist/core/cli/svc-corpus.js" });
    for (const bin of Object.values(pj.bin)) expect(files).toContain(bin);
    expect(files).toContain("dist/core/plugin-api/index.js");
    expect(files).toContain("dist/plugin-api-types/package.json");
    const builtins = files.filter((f) => /^manifests\/builtin\/[^/]+\.json$/.test(f));
    expect(builtins.length).toBeGreaterThan(5);
    for (const m of builtins) {
      const manifest = JSON.parse(await readFile(join(pkg, m), "utf8")) as { plugins: Array<{ entry: string }> };
      for (const p of manifest.plugins) expect(files, `${m} names ${p.entry}`).toContain(p.entry.replace(/^\.\//, ""));
    }
    expect(
      files.filter(
        (f) => /^(core|plugins|test|docs|scripts)\//.test(f) || f.startsWith("dist/test/") || /(?<!\.d)\.ts$/.test(f),
      ),
    ).toEqual([]);
  });

  it("what is unpacked runs: svc --version, svc-corpus --version, and svc serve answers /health", async () => {
    const home = join(tmp, "home");
    await mkdir(home);
    const env = childEnv(home);
    const svc = join(pkg, "dist", "core", "cli", "svc.js");
    expect(execFileSync(process.execPath, [svc, "--version"], { env, encoding: "utf8" }).trim()).toBe(SVC_VERSION);
    expect(
      execFileSync(process.execPath, [join(pkg, "dist", "core", "cli", "svc-corpus.js"), "--version"], {
        env,
        encoding: "utf8",
      }).trim(),
    ).toBe(SVC_VERSION);
    const daemon = spawn(process.execPath, [svc, "serve", "--port", "0"], { env, stdio: ["ignore", "ignore", "pipe"] });
    let log = "";
    daemon.stderr.on("data", (d) => (log += d));
    const exited = new Promise((r) => daemon.once("exit", r));
    try {
      const runtime = await until(
        async () => {
          if (daemon.exitCode !== null) throw new Error(`svc serve exited with ${daemon.exitCode}: ${log}`);
          const r = JSON.parse(await readFile(join(home, "runtime.json"), "utf8").catch(() => "{}")) as {
            pid?: number;
            port?: number;
          };
          return r.pid === daemon.pid ? r : undefined;
        },
        "the unpacked svc serve to write runtime.json",
        60_000,
      );
      const health = await fetch(`http://127.0.0.1:${runtime.port}/health`);
      expect(health.status, log).toBe(200);
      expect(log).not.toMatch(/not loaded/);
    } finally {
      daemon.kill("SIGTERM");
      await exited;
    }
    expect(existsSync(join(pkg, "dist", "test"))).toBe(false);
  }, 90_000);
});
