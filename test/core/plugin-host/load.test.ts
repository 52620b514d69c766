import { REPO_ROOT } from "../../support/paths.js";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadPlugins } from "../../../core/plugin-host/load.js";
import { PluginRegistry } from "../../../core/plugin-host/registry.js";
import { scanPackages } from "../../../core/plugin-host/scan.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { makeSandbox, type Sandbox } from "./sandbox.js";

let sb: Sandbox;
beforeEach(async () => {
  sb = await makeSandbox();
});
afterEach(() => sb.cleanup());

const load = async (ids: string[], builtins = false) => {
  const registry = new PluginRegistry();
  const logger = createMemoryLogger();
  await loadPlugins(registry, { ids, env: sb.env, cwd: sb.cwd, builtins, logger });
  return {
    registry,
    warnings: logger.lines.map((l) => JSON.parse(l) as { level: string; msg: string; package: string }),
  };
};

describe("resolution", () => {
  it("loads one package of each type from the install location and from the cwd, recording where each resolved", async () => {
    await sb.place("install", "svc-fixture-provider");
    await sb.place("cwd", "svc-fixture-target");
    await sb.place("cwd", "svc-fixture-adapter");
    const { registry } = await load(["svc-fixture-provider", "svc-fixture-target", "svc-fixture-adapter"]);
    expect(registry.failures).toEqual([]);
    expect(
      registry.list().map((p) => [p.type, p.kind, p.source.package, p.source.resolvedFrom, p.source.version]),
    ).toEqual([
      ["provider", "fixture-ticks", "svc-fixture-provider", "install", "1.0.0"],
      ["target", "fixture-memo", "svc-fixture-target", "cwd", "1.0.0"],
      ["adapter", "echo", "svc-fixture-adapter", "cwd", "1.0.0"],
    ]);
  });

  it("prefers the install location over the cwd for the same id", async () => {
    await sb.place("install", "svc-fixture-provider");
    await sb.place("cwd", "svc-fixture-provider");
    const { registry } = await load(["svc-fixture-provider"]);
    expect(registry.get("provider", "fixture-ticks")!.source.resolvedFrom).toBe("install");
  });

  it("a standalone svc-adapter.json wins over the package.json key", async () => {
    const dir = await sb.place("cwd", "svc-fixture-provider");
    await writeFile(
      join(dir, "svc-adapter.json"),
      JSON.stringify({
        schema: "svc/adapter/v1",
        svc: ">=0.20.0",
        plugins: [{ type: "provider", kind: "fixture-ticks", entry: "./index.js", description: "from the file" }],
      }),
    );
    const { registry } = await load(["svc-fixture-provider"]);
    expect(registry.get("provider", "fixture-ticks")!.description).toBe("from the file");
  });

  it("finds a package resolved through a symlink (npm's folder install) at its real directory", async () => {
    const real = await sb.source("svc-fixture-adapter");
    const { symlink } = await import("node:fs/promises");
    await symlink(real, join(sb.install, "node_modules", "svc-fixture-adapter"), "junction");
    const { registry } = await load(["svc-fixture-adapter"]);
    expect(registry.get("adapter", "echo")!.source.dir).toBe(real);
  });
});

describe("last one wins", () => {
  it("a later package of the same (type, kind) replaces the earlier one, and the replacement is recorded", async () => {
    await sb.place("cwd", "svc-fixture-provider");
    await sb.place("install", "svc-fixture-provider-alt");
    const { registry } = await load(["svc-fixture-provider", "svc-fixture-provider-alt"]);
    expect(registry.get("provider", "fixture-ticks")!.source.package).toBe("svc-fixture-provider-alt");
    expect(registry.shadowed.map((s) => [s.kind, s.winner.package, s.loser.package])).toEqual([
      ["fixture-ticks", "svc-fixture-provider-alt", "svc-fixture-provider"],
    ]);
    const again = await load(["svc-fixture-provider-alt", "svc-fixture-provider"]);
    expect(again.registry.get("provider", "fixture-ticks")!.source.package).toBe("svc-fixture-provider");
  });

  it("built-ins load first, so a package can override a built-in kind", async () => {
    await sb.place("cwd", "svc-fixture-routine-override");
    const scan = scanPackages({ ids: ["svc-fixture-routine-override"], env: sb.env, cwd: sb.cwd });
    expect(scan.packages[0]!.source).toMatchObject({ package: "svc", builtin: true, resolvedFrom: "builtin" });
    expect(scan.packages.at(-1)!.source.package).toBe("svc-fixture-routine-override");
    const { registry } = await load(["svc-fixture-routine-override"], true);
    expect(registry.get("target", "routine")!.source.package).toBe("svc-fixture-routine-override");
    // The built-in loaded (the suite runs after a build) and is the loser.
    expect(registry.failures.find((f) => f.package === "svc (built-in routine-target)")).toBeUndefined();
    expect(registry.shadowed).toContainEqual(
      expect.objectContaining({ kind: "routine", loser: expect.objectContaining({ package: "svc" }) }),
    );
  });
});

describe("isolation: a broken package only warns", () => {
  it("records each failure with its phase, warns once per package naming it and the cause, and loads the rest", async () => {
    for (const name of [
      "svc-fixture-provider",
      "svc-fixture-bad-manifest",
      "svc-fixture-throws",
      "svc-fixture-wrong-shape",
      "svc-fixture-host-range",
      "svc-fixture-no-manifest",
      "svc-fixture-target",
    ]) {
      await sb.place(name === "svc-fixture-target" ? "install" : "cwd", name);
    }
    const ids = [
      "svc-fixture-provider",
      "svc-fixture-missing",
      "svc-fixture-bad-manifest",
      "svc-fixture-throws",
      "svc-fixture-wrong-shape",
      "svc-fixture-host-range",
      "svc-fixture-no-manifest",
      "svc-fixture-target",
    ];
    const { registry, warnings } = await load(ids);
    expect(registry.list().map((p) => p.kind)).toEqual(["fixture-ticks", "fixture-memo"]);
    expect(registry.failures.map((f) => [f.package, f.phase])).toEqual([
      ["svc-fixture-missing", "resolve"],
      ["svc-fixture-bad-manifest", "validate"],
      ["svc-fixture-throws", "import"],
      ["svc-fixture-wrong-shape", "shape"],
      ["svc-fixture-host-range", "host-range"],
      ["svc-fixture-no-manifest", "manifest"],
    ]);
    const byPkg = Object.fromEntries(registry.failures.map((f) => [f.package, f.error]));
    expect(byPkg["svc-fixture-missing"]).toContain(
      `not found from the install location (${sb.install}) nor from the svc location (${REPO_ROOT.replace(/\/$/, "")}) nor from the cwd (${sb.cwd})`,
    );
    expect(byPkg["svc-fixture-bad-manifest"]).toMatch(
      /plugins\[0\]\.type: .*plugins\[0\]\.kind: .*plugins\[0\]\.entry: /,
    );
    expect(byPkg["svc-fixture-throws"]).toContain("fixture entry exploded at import");
    expect(byPkg["svc-fixture-wrong-shape"]).toContain("no setup(ctx) function; default-export defineTarget(");
    expect(byPkg["svc-fixture-host-range"]).toBe("needs svc ^99.0.0, but this is svc 0.20.0");
    expect(byPkg["svc-fixture-no-manifest"]).toContain('add a "svc-adapter" key');
    const warned = warnings.filter((w) => w.level === "warn");
    expect(warned.map((w) => w.package)).toEqual(registry.failures.map((f) => f.package));
    for (const w of warned)
      expect(w.msg).toMatch(
        new RegExp(
          `^adapter package ${w.package} not loaded \\((resolve|validate|import|shape|host-range|manifest)\\): .+`,
        ),
      );
  });

  it("a package with one bad entry among good ones is absent as a whole", async () => {
    const dir = await sb.place("cwd", "svc-fixture-provider");
    await mkdir(join(dir, "more"));
    await writeFile(join(dir, "more", "bad.js"), "export default { type: 'adapter', kind: 'other' };");
    const pj = JSON.parse(await (await import("node:fs/promises")).readFile(join(dir, "package.json"), "utf8"));
    pj["svc-adapter"].plugins.push({ type: "adapter", kind: "fixture-more", entry: "./more/bad.js" });
    await writeFile(join(dir, "package.json"), JSON.stringify(pj));
    const { registry } = await load(["svc-fixture-provider"]);
    expect(registry.list()).toEqual([]);
    expect(registry.failures[0]).toMatchObject({ package: "svc-fixture-provider", phase: "shape" });
    expect(registry.failures[0]!.error).toContain(
      'default export has kind "other", the manifest declares "fixture-more"',
    );
  });

  it("an id that is not a package name fails at resolve", async () => {
    const { registry } = await load(["../../etc"]);
    expect(registry.failures).toEqual([
      { package: "../../etc", phase: "resolve", error: '"../../etc" is not a package name' },
    ]);
  });
});
