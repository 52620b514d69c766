/**
 * `svc adapters init`: each scaffold (provider and target, provider only, target only,
 * TypeScript) passes its own test, which installs the package into a scratch SVC_HOME, runs the
 * real daemon and waits for an event to arrive; a broken plugin makes that test fail; bad input
 * is a usage error that writes nothing. The TypeScript scaffold runs as printed, `npm install &&
 * npm test`, with the real npm and the public registry (which has no svc): what it needs of svc
 * is the types-only tarball init writes into it.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnv, runCli } from "../../support/cli.js";
import { CLI_PATH, REPO_ROOT } from "../../support/paths.js";
import { SVC_VERSION } from "../../../core/version.js";

let dir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc-init-"));
  const bin = join(dir, "bin");
  await mkdir(bin);
  await writeFile(join(bin, "svc"), `#!/bin/sh\nexec "${process.execPath}" "${CLI_PATH}" "$@"\n`);
  await chmod(join(bin, "svc"), 0o755);
  env = { ...childEnv(join(dir, "unused-home")), PATH: `${bin}:${process.env.PATH}` };
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const init = (args: string[]) =>
  runCli(["adapters", "init", ...args], { home: join(dir, "unused-home"), cwd: dir, env });

/** Runs a command in a scaffolded package the way its author would. */
function run(
  cmd: string,
  args: string[],
  cwd: string,
  extra: NodeJS.ProcessEnv = {},
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env: { ...env, ...extra }, timeout: 150_000 }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

describe("svc adapters init", () => {
  it("scaffolds a provider and a target whose own test receives an event from the real daemon", async () => {
    const r = await init(["svc-adapter-hello"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("provider hello, target hello-log");
    const pkg = join(dir, "svc-adapter-hello");
    expect((await readdir(pkg)).sort()).toEqual([
      ".gitignore",
      "README.md",
      "package.json",
      "provider.js",
      "target.js",
      "test",
    ]);
    const pj = JSON.parse(await readFile(join(pkg, "package.json"), "utf8"));
    expect(pj.peerDependencies).toBeUndefined();
    expect(pj["svc-adapter"].plugins.map((p: { type: string; kind: string }) => `${p.type} ${p.kind}`)).toEqual([
      "provider hello",
      "target hello-log",
    ]);
    expect(await readFile(join(pkg, "provider.js"), "utf8")).toContain('from "@svc/plugin-api"');
    const t = await run("npm", ["test"], pkg);
    expect(t.out).toMatch(/^# pass 1$/m);
    expect(t.code, t.out).toBe(0);
  }, 180_000);

  it("its test fails when the plugin misbehaves", async () => {
    const r = await init(["broken", "--provider", "tick", "--target", "sink"]);
    expect(r.code, r.stderr).toBe(0);
    const file = join(dir, "broken", "provider.js");
    await writeFile(
      file,
      (await readFile(file, "utf8")).replace('subjects: ["tick:demo"]', 'subjects: ["tick:elsewhere"]'),
    );
    const t = await run("npm", ["test"], join(dir, "broken"));
    expect(t.code).not.toBe(0);
    expect(t.out).toMatch(/^# fail 1$/m);
  }, 180_000);

  it.each([
    ["a provider only (events parked for a session target)", "p-only", ["--provider", "jira"], "provider.js"],
    ["a target only (events pushed through agentpush)", "t-only", ["--target", "memo"], "target.js"],
    ["a redactor only (svc installs and loads it)", "r-only", ["--redactor", "emails"], "redactor.js"],
  ])(
    "scaffolds %s",
    async (_what, name, flags, only) => {
      const r = await init([name, ...flags]);
      expect(r.code, r.stderr).toBe(0);
      const files = await readdir(join(dir, name));
      expect(files).toContain(only);
      expect(files.filter((f) => f.endsWith(".js"))).toEqual([only]);
      const t = await run("npm", ["test"], join(dir, name));
      expect(t.code, t.out).toBe(0);
    },
    180_000,
  );

  it.each([
    [["x-kind", "--provider", "Jira"], /--provider "Jira": must be a slug/],
    [["x-target", "--target", "a b"], /--target "a b": must be a slug/],
    [["Bad Name"], /not a valid npm package name/],
  ])("refuses %j with a usage error and writes nothing", async (args, message) => {
    const r = await init(args as string[]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(existsSync(join(dir, (args as string[])[0]!))).toBe(false);
  });

  it("refuses a folder that is not empty", async () => {
    await mkdir(join(dir, "taken"));
    await writeFile(join(dir, "taken", "keep.txt"), "mine");
    const r = await init(["taken"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/taken is not empty/);
    expect(await readdir(join(dir, "taken"))).toEqual(["keep.txt"]);
  });
});

describe("svc adapters init --typescript", () => {
  let pkg: string;
  let printed: string;
  let install: { code: number; out: string };
  beforeAll(async () => {
    const r = await init(["ts-adapter", "--typescript", "--provider", "tick", "--target", "sink"]);
    expect(r.code, r.stderr).toBe(0);
    printed = r.stdout;
    pkg = join(dir, "ts-adapter");
    // The real `npm install`, as printed, from the registry; npm's own cache (prefer-offline)
    // spares the metadata round trips for packages it already holds, and no audit request.
    install = await run("npm", ["install"], pkg, {
      npm_config_prefer_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
    });
  }, 180_000);

  it("names what it needs of svc as a file: tarball inside the package (no path of this machine, no @svc/svc)", async () => {
    expect(printed).toContain("next: cd ts-adapter && npm install && npm test");
    const text = await readFile(join(pkg, "package.json"), "utf8");
    const pj = JSON.parse(text);
    expect(text).not.toContain(REPO_ROOT.replace(/\/$/, ""));
    expect(pj.peerDependencies).toBeUndefined();
    expect(pj.dependencies).toBeUndefined();
    const tarball = `vendor/svc-plugin-api-${SVC_VERSION}.tgz`;
    expect(pj.devDependencies).toEqual({
      "@svc/plugin-api": `file:${tarball}`,
      "@types/node": "^20.19.0",
      typescript: "~5.9",
    });
    expect(existsSync(join(pkg, tarball))).toBe(true);
    expect(pj.files).toEqual(["dist"]); // the tarball is the author's, never published with the package
  });

  it("npm install succeeds and brings the types-only @svc/plugin-api, with no JavaScript of svc", async () => {
    expect(install.code, install.out).toBe(0);
    const api = join(pkg, "node_modules", "@svc", "plugin-api");
    expect(JSON.parse(await readFile(join(api, "package.json"), "utf8")).version).toBe(SVC_VERSION);
    expect(existsSync(join(api, "core", "plugin-api", "index.d.ts"))).toBe(true);
    expect(existsSync(join(api, "core", "plugin-api", "index.js"))).toBe(false);
    expect(existsSync(join(pkg, "node_modules", "@svc", "svc"))).toBe(false);
  });

  it("npm test builds the typed sources and passes the scaffold's test against the real daemon", async () => {
    expect(install.code, install.out).toBe(0);
    const t = await run("npm", ["test"], pkg);
    expect(t.code, t.out).toBe(0);
    expect(t.out).toMatch(/^# pass 1$/m);
    expect(existsSync(join(pkg, "dist", "provider.js"))).toBe(true);
  }, 180_000);

  it("a type error in a plugin fails the build: the types are real", async () => {
    expect(install.code, install.out).toBe(0);
    const src = join(pkg, "src", "target.ts");
    await writeFile(src, (await readFile(src, "utf8")).replace('return { ack: "now" };', 'return { ack: "later" };'));
    const bad = await run("npm", ["run", "build"], pkg);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/target\.ts.*error TS/);
  });
});
