/**
 * "Later plugins of the same (type, kind) replace earlier ones" (DESIGN.md, Loading): the daemon's
 * registry, `svc adapters ls` and `svc acp ls` must name the same winner, and the rule itself is
 * one table ({@link KindTable}).
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KindTable, PluginRegistry, type PluginSource } from "../../../core/plugin-host/registry.js";
import { loadPlugins } from "../../../core/plugin-host/load.js";
import type { AdapterListing } from "../../../core/cli/adapters/ls.js";
import { runCli } from "../../support/cli.js";
import { makeSandbox, type Sandbox } from "./sandbox.js";

const source = (pkg: string): PluginSource => ({ package: pkg, builtin: false, resolvedFrom: "cwd", dir: `/x/${pkg}` });

describe("KindTable", () => {
  it("keeps the last entry of each (type, kind), in first-seen order, and records every replacement", () => {
    const [a, b, c] = [source("a"), source("b"), source("c")];
    const t = new KindTable([
      { type: "adapter" as const, kind: "echo", source: a },
      { type: "provider" as const, kind: "echo", source: a },
      { type: "adapter" as const, kind: "echo", source: b },
      { type: "adapter" as const, kind: "echo", source: c },
    ]);
    expect(t.get("adapter", "echo")!.source).toBe(c);
    expect(t.get("provider", "echo")!.source).toBe(a);
    expect(t.get("target", "echo")).toBeUndefined();
    expect(t.list().map((e) => `${e.type}:${e.source.package}`)).toEqual(["adapter:c", "provider:a"]);
    expect(t.shadowed).toEqual([
      { type: "adapter", kind: "echo", winner: b, loser: a },
      { type: "adapter", kind: "echo", winner: c, loser: b },
    ]);
  });
});

describe("a package removed while the daemon runs", () => {
  const builtin: PluginSource = { package: "svc", builtin: true, resolvedFrom: "builtin", dir: "/svc" };
  const plugin = (type: "adapter" | "provider", kind: string, src: PluginSource) => ({
    type,
    kind,
    definition: { type, kind } as never,
    source: src,
  });

  it("KindTable.remove: what the dropped entries replaced serves again, and their replacements are forgotten", () => {
    const [a, b] = [source("a"), source("b")];
    const t = new KindTable([
      { type: "adapter" as const, kind: "echo", source: builtin },
      { type: "adapter" as const, kind: "echo", source: a },
      { type: "adapter" as const, kind: "solo", source: a },
      { type: "adapter" as const, kind: "other", source: b },
    ]);
    const dropped = t.remove((e) => e.source === a);
    expect(dropped.map((e) => e.kind)).toEqual(["echo", "solo"]);
    expect(t.get("adapter", "echo")!.source).toBe(builtin);
    expect(t.get("adapter", "solo")).toBeUndefined();
    expect(t.list().map((e) => e.kind)).toEqual(["echo", "other"]);
    expect(t.shadowed).toEqual([]);
  });

  it("PluginRegistry.removePackage drops only the given types of that package; a set-up instance is kept for shutdown", async () => {
    const pkg = source("pkg");
    const r = new PluginRegistry();
    r.add(plugin("adapter", "acp", builtin));
    r.add(plugin("adapter", "acp", pkg));
    r.add(plugin("provider", "feed", pkg));
    const instance = { stop: () => undefined };
    await r.instance("adapter", "acp", async () => instance);
    expect(r.packagesOf(["adapter"])).toEqual(new Set(["pkg"]));
    expect(r.removePackage("pkg", ["adapter"]).map((p) => p.kind)).toEqual(["acp"]);
    expect(r.get("adapter", "acp")!.source).toBe(builtin);
    expect(r.get("provider", "feed")!.source).toBe(pkg);
    expect(r.packagesOf(["adapter"])).toEqual(new Set());
    // The built-in is set up afresh at its next use; the package's instance is still stopped at shutdown.
    expect(await r.instance("adapter", "acp", async () => ({ fresh: true }))).toEqual({ fresh: true });
    expect((await r.setUpInstances()).map((i) => i.instance)).toContain(instance);
  });
});

describe("every view names the same winner", () => {
  let sb: Sandbox;
  const ids = ["svc-fixture-adapter", "svc-fixture-adapter-alt"];
  beforeAll(async () => {
    sb = await makeSandbox();
    await sb.place("cwd", "svc-fixture-adapter");
    // The same adapter again under another name, later in `adapters`.
    const alt = await sb.place("cwd", "svc-fixture-adapter", "svc-fixture-adapter-alt");
    const pj = JSON.parse(await readFile(join(alt, "package.json"), "utf8"));
    await writeFile(join(alt, "package.json"), JSON.stringify({ ...pj, name: "svc-fixture-adapter-alt" }));
    await sb.writeConfig({ adapters: ids });
  });
  afterAll(() => sb.cleanup());

  it("the registry: the later package's adapter, the earlier one recorded as shadowed", async () => {
    const registry = new PluginRegistry();
    await loadPlugins(registry, { ids, env: sb.env, cwd: sb.cwd, builtins: false });
    expect(registry.get("adapter", "echo")!.source.package).toBe("svc-fixture-adapter-alt");
    expect(registry.shadowed.map((s) => [s.kind, s.winner.package, s.loser.package])).toEqual([
      ["echo", "svc-fixture-adapter-alt", "svc-fixture-adapter"],
    ]);
  });

  it("svc adapters ls", async () => {
    const r = await runCli(["adapters", "ls", "--json"], { home: sb.home, cwd: sb.cwd, env: sb.env });
    expect(r.code, r.stderr).toBe(0);
    const l = JSON.parse(r.stdout) as AdapterListing;
    expect(l.packages.map((p) => [p.id, p.plugins.map((x) => x.status)])).toEqual([
      ["svc-fixture-adapter", ["lost"]],
      ["svc-fixture-adapter-alt", ["wins"]],
    ]);
    expect(l.shadowed).toEqual([
      { type: "adapter", kind: "echo", winner: "svc-fixture-adapter-alt", loser: "svc-fixture-adapter" },
    ]);
  });

  it("svc acp ls lists the winning package, not the first one declared", async () => {
    const r = await runCli(["acp", "ls", "--json"], { home: sb.home, cwd: sb.cwd, env: sb.env });
    expect(r.code, r.stderr).toBe(0);
    const echo = (
      JSON.parse(r.stdout) as { agents: Array<{ slug: string; source: string; package?: string }> }
    ).agents.find((a) => a.slug === "echo");
    expect(echo).toMatchObject({ source: "package", package: "svc-fixture-adapter-alt" });
  });
});
