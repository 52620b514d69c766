/**
 * Issue 28, "installs that refuse what will not load": `svc adapters install` loads the package in a
 * scratch host (import, shape check, setup with a timeout) before committing it. A package whose
 * entry has a syntax error, whose default export is the wrong kind, whose setup throws or whose
 * setup hangs (pending for ever, or blocking its thread) is refused with exit 1 and the load
 * report's message, and leaves nothing installed: no node_modules entry, the install prefix's
 * package.json and lock as they were, config.json unchanged. Nothing of the scratch host lands in
 * the real $SVC_HOME. `svc adapters ls --load` exits 1 when a listed package fails to load.
 */
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/cli.js";
import { makeSandbox, type Sandbox } from "../core/plugin-host/sandbox.js";

let sb: Sandbox;
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runCli(args, { home: sb.home, cwd: sb.root, env: { ...sb.env, ...env }, timeoutMs: 90_000 });
const read = (p: string) => readFile(p, "utf8").catch(() => undefined);

/** Everything an install could leave behind. */
async function installState() {
  return {
    packageJson: await read(join(sb.install, "package.json")),
    lock: await read(join(sb.install, "package-lock.json")),
    nodeModules: (await readdir(join(sb.install, "node_modules"))).sort(),
    config: await read(join(sb.home, "config.json")),
    home: (await readdir(sb.home)).sort(),
  };
}

beforeAll(async () => {
  sb = await makeSandbox();
  // One good package first, so the prefix has a package.json, a lock and config adapters to keep.
  const good = await cli(["adapters", "install", await sb.source("svc-fixture-target")]);
  expect(good.code, good.stderr).toBe(0);
  expect(good.stdout).toContain("checking that it loads (import, shape, setup) in a scratch host");
}, 120_000);
afterAll(() => sb.cleanup());

describe("svc adapters install refuses a package that does not load, and leaves nothing installed", () => {
  it.each([
    [
      "an entry with a syntax error",
      "svc-fixture-syntax-error",
      {},
      /refused svc-fixture-syntax-error: it does not load \(phase import\): importing \.\/index\.js \(provider fixture-syntax\) failed: .*(Unexpected|missing)/,
    ],
    [
      "a default export of the wrong kind",
      "svc-fixture-wrong-shape",
      {},
      /refused svc-fixture-wrong-shape: it does not load \(phase shape\): \.\/index\.js: default export has no setup\(ctx\) function; default-export defineTarget\(\{ kind: "fixture-shapeless"/,
    ],
    [
      "a setup that throws",
      "svc-fixture-setup-throws",
      {},
      /refused svc-fixture-setup-throws: it does not load \(phase setup\): \.\/index\.js \(provider broken-setup\): its setup threw: BROKEN_API_KEY is not set/,
    ],
    [
      "a setup that never settles",
      "svc-fixture-setup-hangs",
      {},
      /refused svc-fixture-setup-hangs: it does not load \(phase setup\): \.\/index\.js \(provider fixture-hangs\): setup of provider plugin "fixture-hangs" .*did not finish within 10000 ms/,
    ],
    [
      "a setup that blocks its thread (the scratch host is killed)",
      "svc-fixture-setup-hangs",
      { FIXTURE_HANG: "block" },
      /refused svc-fixture-setup-hangs: it does not load \(phase setup\): setup of provider fixture-hangs \(\.\/index\.js\) did not finish within 10 s \(its process was stopped\)/,
    ],
  ])(
    "%s: exit 1 with the load report, rolled back",
    async (_what, fixture, env, message) => {
      const before = await installState();
      const r = await cli(["adapters", "install", await sb.source(fixture)], env);
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain("The install was rolled back; config.json is unchanged.");
      expect(existsSync(join(sb.install, "node_modules", fixture))).toBe(false);
      expect(await installState()).toEqual(before);
      expect(JSON.parse(before.config!).adapters).toEqual(["svc-fixture-target"]);
    },
    120_000,
  );
});

describe("svc adapters ls --load", () => {
  it("exits 0 when everything loads, 1 naming the package when one does not; --json keeps its shape", async () => {
    const ok = await cli(["adapters", "ls", "--load", "--json"]);
    expect(ok.code, ok.stderr).toBe(0);
    await sb.place("install", "svc-fixture-syntax-error");
    await sb.writeConfig({ adapters: ["svc-fixture-target", "svc-fixture-syntax-error"] });
    const bad = await cli(["adapters", "ls", "--load", "--json"]);
    expect(bad.code).toBe(1);
    const listing = JSON.parse(bad.stdout) as {
      packages: Array<{ id: string }>;
      failures: Array<{ package: string; phase: string }>;
    };
    expect(listing.packages.map((p) => p.id)).toEqual(["svc-fixture-target"]);
    expect(listing.failures).toContainEqual(
      expect.objectContaining({ package: "svc-fixture-syntax-error", phase: "import" }),
    );
    expect(bad.stderr).toContain("1 adapter package(s) failed to load: svc-fixture-syntax-error (import)");
    const text = await cli(["adapters", "ls", "--load"]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/svc-fixture-syntax-error \(import\): importing \.\/index\.js/);
    // Without --load only manifests are read: nothing failed that it could see.
    expect((await cli(["adapters", "ls"])).code).toBe(0);
  });
});
