import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../support/cli.js";
import { makeSandbox, type Sandbox } from "../plugin-host/sandbox.js";
import type { AdapterListing } from "../../../core/cli/adapters/ls.js";

const readJson = async (p: string) => JSON.parse(await readFile(p, "utf8"));

describe("svc adapters: the done-when scenario", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await makeSandbox();
    // A third-party package written from the README, in the user's project; a second one of the
    // same kind later in `adapters`; and broken ones.
    await sb.place("cwd", "svc-fixture-provider");
    await sb.place("cwd", "svc-fixture-provider-alt");
    await sb.place("cwd", "svc-fixture-throws");
    await sb.place("install", "svc-fixture-bad-manifest");
    await sb.writeConfig({
      adapters: [
        "svc-fixture-provider",
        "svc-fixture-throws",
        "svc-fixture-provider-alt",
        "svc-fixture-bad-manifest",
        "svc-fixture-missing",
      ],
    });
  });
  afterAll(() => sb.cleanup());

  it("ls shows both packages, which one wins the kind and to whom the other lost; broken ones are listed as failures, and --load exits 1 naming them", async () => {
    const r = await runCli(["adapters", "ls", "--json", "--load"], { home: sb.home, cwd: sb.cwd, env: sb.env });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain(
      "3 adapter package(s) failed to load: svc-fixture-throws (import), svc-fixture-bad-manifest (validate), svc-fixture-missing (resolve)",
    );
    const l = JSON.parse(r.stdout) as AdapterListing;
    expect(
      l.packages.map((p) => [
        p.id,
        p.resolvedFrom,
        p.version,
        p.plugins.map((x) => `${x.type}:${x.kind}:${x.status}:${x.lostTo ?? x.replaces?.join() ?? ""}`),
      ]),
    ).toEqual([
      ["svc-fixture-provider", "cwd", "1.0.0", ["provider:fixture-ticks:lost:svc-fixture-provider-alt"]],
      [
        "svc-fixture-provider-alt",
        "cwd",
        "2.0.0",
        ["provider:fixture-ticks:wins:provider fixture-ticks of package svc-fixture-provider"],
      ],
    ]);
    expect(l.shadowed).toContainEqual({
      type: "provider",
      kind: "fixture-ticks",
      winner: "svc-fixture-provider-alt",
      loser: "svc-fixture-provider",
    });
    expect(l.failures.filter((f) => f.package.startsWith("svc-")).map((f) => [f.package, f.phase])).toEqual([
      ["svc-fixture-throws", "import"],
      ["svc-fixture-bad-manifest", "validate"],
      ["svc-fixture-missing", "resolve"],
    ]);
    expect(l.builtins.length).toBeGreaterThan(0);
  });

  it("ls without --load reads manifests only (the import failure is not seen) and prints a readable table", async () => {
    const r = await runCli(["adapters", "ls"], { home: sb.home, cwd: sb.cwd, env: sb.env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/svc-fixture-provider@1\.0\.0 +resolved from cwd/);
    expect(r.stdout).toMatch(/provider fixture-ticks +lost to svc-fixture-provider-alt/);
    expect(r.stdout).toMatch(
      /provider fixture-ticks +wins \(replaces provider fixture-ticks of package svc-fixture-provider\)/,
    );
    expect(r.stdout).toMatch(/svc-fixture-bad-manifest \(validate\): invalid svc\/adapter\/v1 manifest/);
    expect(r.stdout).toMatch(/svc-fixture-missing \(resolve\): package "svc-fixture-missing" is not installed/);
    expect(r.stdout).not.toContain("exploded");
  });

  it("`svc plugins ls` still works and says it was renamed", async () => {
    const r = await runCli(["plugins", "ls", "--json"], { home: sb.home, cwd: sb.cwd, env: sb.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("`svc plugins` was renamed to `svc adapters` in 0.20.0");
    expect(JSON.parse(r.stdout).packages).toHaveLength(3);
  });

  it("every verb has --help", async () => {
    for (const args of [["adapters"], ["adapters", "ls"], ["adapters", "install"], ["adapters", "rm"], ["install"]]) {
      const r = await runCli([...args, "--help"], { home: sb.home, env: sb.env });
      expect(r.code, args.join(" ")).toBe(0);
      expect(r.stdout).toContain("Usage:");
    }
  });
});

describe("svc adapters install / rm (offline: folder and tarball specs)", () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await makeSandbox();
  });
  afterAll(() => sb.cleanup());
  const cli = (args: string[]) => runCli(args, { home: sb.home, cwd: sb.root, env: sb.env, timeoutMs: 60_000 });

  it("installs a folder into the install location, creates config.json lazily and lists the id", async () => {
    const src = await sb.source("svc-fixture-target");
    expect(existsSync(join(sb.home, "config.json"))).toBe(false);
    const r = await cli(["adapters", "install", "./src/svc-fixture-target"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("installed svc-fixture-target@1.0.0");
    expect(r.stdout).toContain("target fixture-memo");
    expect(await readJson(join(sb.home, "config.json"))).toEqual({ adapters: ["svc-fixture-target"] });
    expect((await readJson(join(sb.install, "package.json"))).dependencies["svc-fixture-target"]).toMatch(
      /src\/svc-fixture-target$/,
    );
    const ls = JSON.parse(
      (await runCli(["adapters", "ls", "--json", "--load"], { home: sb.home, cwd: sb.root, env: sb.env })).stdout,
    ) as AdapterListing;
    expect(ls.packages.map((p) => [p.id, p.resolvedFrom, p.dir])).toEqual([["svc-fixture-target", "install", src]]);
    expect(ls.failures.filter((f) => !f.package.startsWith("svc ("))).toEqual([]);
  });

  it("installs a tarball, appending to adapters and keeping unknown keys of config.json", async () => {
    const raw = JSON.parse(await readFile(join(sb.home, "config.json"), "utf8"));
    await writeFile(
      join(sb.home, "config.json"),
      JSON.stringify({ ...raw, someFutureKey: { x: 1 }, daemon: { port: 19999 } }),
    );
    const src = await sb.source("svc-fixture-adapter");
    const { execFileSync } = await import("node:child_process");
    const tgz = execFileSync("npm", ["pack", "--silent", "--pack-destination", sb.src], { cwd: src, encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1)!;
    const r = await cli(["adapters", "install", join(sb.src, tgz)]);
    expect(r.code, r.stderr).toBe(0);
    expect(await readJson(join(sb.home, "config.json"))).toEqual({
      adapters: ["svc-fixture-target", "svc-fixture-adapter"],
      someFutureKey: { x: 1 },
      daemon: { port: 19999 },
    });
    const ls = JSON.parse(
      (await runCli(["adapters", "ls", "--json", "--load"], { home: sb.home, cwd: sb.root, env: sb.env })).stdout,
    ) as AdapterListing;
    expect(ls.packages.find((p) => p.id === "svc-fixture-adapter")).toMatchObject({
      resolvedFrom: "install",
      dir: join(sb.install, "node_modules", "svc-fixture-adapter"),
    });
    expect(ls.failures.filter((f) => !f.package.startsWith("svc ("))).toEqual([]);
  });

  it("refuses a package with an invalid manifest and rolls the install back", async () => {
    const before = await readFile(join(sb.install, "package.json"), "utf8");
    const configBefore = await readFile(join(sb.home, "config.json"), "utf8");
    await sb.source("svc-fixture-bad-manifest");
    const r = await cli(["adapters", "install", "./src/svc-fixture-bad-manifest"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refused svc-fixture-bad-manifest: invalid svc/adapter/v1 manifest");
    expect(r.stderr).toContain("rolled back");
    expect(await readFile(join(sb.install, "package.json"), "utf8")).toBe(before);
    expect(existsSync(join(sb.install, "node_modules", "svc-fixture-bad-manifest"))).toBe(false);
    expect(await readFile(join(sb.home, "config.json"), "utf8")).toBe(configBefore);
  });

  it("refusing an upgrade restores the version that was installed", async () => {
    const { execFileSync } = await import("node:child_process");
    const { cp } = await import("node:fs/promises");
    const v2 = join(sb.src, "adapter-v2");
    await cp(join(sb.src, "svc-fixture-adapter"), v2, { recursive: true });
    const pj = await readJson(join(v2, "package.json"));
    await writeFile(join(v2, "package.json"), JSON.stringify({ ...pj, version: "2.0.0" }));
    await writeFile(
      join(v2, "svc-adapter.json"),
      JSON.stringify({ schema: "svc/adapter/v1", svc: ">=0.20.0", plugins: [] }),
    );
    const tgz = execFileSync("npm", ["pack", "--silent", "--pack-destination", sb.src], { cwd: v2, encoding: "utf8" })
      .trim()
      .split("\n")
      .at(-1)!;
    const r = await cli(["adapters", "install", join(sb.src, tgz)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("plugins: Too small");
    expect((await readJson(join(sb.install, "node_modules", "svc-fixture-adapter", "package.json"))).version).toBe(
      "1.0.0",
    );
    expect((await readJson(join(sb.install, "package.json"))).dependencies["svc-fixture-adapter"]).toContain(
      "svc-fixture-adapter-1.0.0.tgz",
    );
  });

  it("refuses a package whose host range this svc does not satisfy", async () => {
    await sb.source("svc-fixture-host-range");
    const r = await cli(["adapters", "install", "./src/svc-fixture-host-range"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("needs svc ^99.0.0, but this is svc 0.20.0");
    expect(existsSync(join(sb.install, "node_modules", "svc-fixture-host-range"))).toBe(false);
  });

  it("a missing folder is a clear error", async () => {
    const r = await cli(["adapters", "install", "./src/nothing-here"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no such folder or tarball");
  });

  it("installs a runtime profile through profileAliases, recording its adapter", async () => {
    const src = await sb.source("svc-fixture-runtime-profile");
    const cfg = await readJson(join(sb.home, "config.json"));
    await writeFile(join(sb.home, "config.json"), JSON.stringify({ ...cfg, profileAliases: { fixture: src } }));
    const r = await cli(["install", "runtime-profile/fixture"]);
    expect(r.code, r.stderr).toBe(0);
    expect((await readJson(join(sb.home, "config.json"))).adapters).toEqual([
      "svc-fixture-target",
      "svc-fixture-adapter",
      "svc-fixture-runtime-profile",
    ]);
    expect((await cli(["install", "not-a-profile"])).code).toBe(2);
  });

  it("rm removes the id from adapters and uninstalls it; an unknown id is an error", async () => {
    const r = await cli(["adapters", "rm", "svc-fixture-target"]);
    expect(r.code, r.stderr).toBe(0);
    const cfg = await readJson(join(sb.home, "config.json"));
    expect(cfg.adapters).toEqual(["svc-fixture-adapter", "svc-fixture-runtime-profile"]);
    expect(cfg.someFutureKey).toEqual({ x: 1 });
    expect((await readJson(join(sb.install, "package.json"))).dependencies["svc-fixture-target"]).toBeUndefined();
    // No trace: the package's folder is gone from the install prefix.
    expect(existsSync(join(sb.install, "node_modules", "svc-fixture-target"))).toBe(false);
    const again = await cli(["adapters", "rm", "svc-fixture-target"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("svc-fixture-target is neither in adapters");
  });
});
