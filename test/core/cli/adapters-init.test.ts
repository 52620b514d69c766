/**
 * `svc adapters init`: each scaffold (provider and target, provider only, target only,
 * TypeScript) passes its own test, which installs the package into a scratch SVC_HOME, runs the
 * real daemon and waits for an event to arrive; a broken plugin makes that test fail; bad input
 * is a usage error that writes nothing.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from "node:fs/promises";
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
function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, env, timeout: 150_000 }, (err, stdout, stderr) =>
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

  it("--typescript: a published-style peer dependency on @svc/svc (no path of this machine); typed sources build against it and pass the same test", async () => {
    const r = await init(["ts-adapter", "--typescript", "--provider", "tick", "--target", "sink"]);
    expect(r.code, r.stderr).toBe(0);
    const pkg = join(dir, "ts-adapter");
    const text = await readFile(join(pkg, "package.json"), "utf8");
    const pj = JSON.parse(text);
    // Anyone who installs the package can resolve what it names: a registry range, not a path.
    expect(text).not.toContain(REPO_ROOT.replace(/\/$/, ""));
    expect(text).not.toMatch(/"(file:|\/|[A-Za-z]:\\)/);
    expect(pj.peerDependencies).toEqual({ "@svc/svc": `^${SVC_VERSION.split(".").slice(0, 2).join(".")}` });
    expect(Object.keys(pj.devDependencies).sort()).toEqual(["@types/node", "typescript"]);
    // What `npm install` would make, without the registry: the peer @svc/svc (this checkout, as
    // its published tarball holds dist/ and dist/plugin-api-types), TypeScript and Node's types.
    const nm = join(pkg, "node_modules");
    await mkdir(join(nm, "@svc"), { recursive: true });
    await mkdir(join(nm, "@types"), { recursive: true });
    await mkdir(join(nm, ".bin"), { recursive: true });
    await symlink(REPO_ROOT, join(nm, "@svc", "svc"));
    await symlink(join(REPO_ROOT, "node_modules", "typescript"), join(nm, "typescript"));
    await symlink(join(REPO_ROOT, "node_modules", "@types", "node"), join(nm, "@types", "node"));
    await symlink(join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc"), join(nm, ".bin", "tsc"));
    expect(existsSync(join(REPO_ROOT, "dist", "plugin-api-types", "core", "plugin-api", "index.js"))).toBe(false); // types only
    const t = await run("npm", ["test"], pkg);
    expect(t.code, t.out).toBe(0);
    expect(existsSync(join(pkg, "dist", "provider.js"))).toBe(true);
    // A type error in the plugin is caught by the build: the types are real.
    const src = join(pkg, "src", "target.ts");
    await writeFile(src, (await readFile(src, "utf8")).replace('return { ack: "now" };', 'return { ack: "later" };'));
    const bad = await run("npm", ["run", "build"], pkg);
    expect(bad.code).not.toBe(0);
    expect(bad.out).toMatch(/target\.ts.*error TS/);
  }, 180_000);

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
