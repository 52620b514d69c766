/**
 * The README's "Writing an adapter package" walk-through, followed to the letter: its files are
 * written into a fresh folder, built with TypeScript, installed into a project's node_modules (as
 * `npm install ../svc-adapter-hello` would), loaded from the cwd and used.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createContainer } from "../../../core/container.js";
import type { SentinelIngress, SvcEvent } from "../../../core/plugin-api/index.js";
import { pluginInstance } from "../../../core/plugin-host/context.js";
import { loadPlugins } from "../../../core/plugin-host/load.js";
import { PLUGINS, SERVICES, resolve } from "../../../core/tokens.js";
import { runCli } from "../../support/cli.js";
import { REPO_ROOT } from "../../support/paths.js";
import { buildAdapterWalkthrough } from "../../support/readme.js";
import { makeSandbox, type Sandbox } from "./sandbox.js";

describe("a package written only from the README", () => {
  let sb: Sandbox;
  let pkgDir: string;
  beforeAll(async () => {
    sb = await makeSandbox();
    pkgDir = join(sb.src, "svc-adapter-hello");
    expect(await buildAdapterWalkthrough(pkgDir)).toEqual(["package.json", "src/index.ts", "tsconfig.json"]);
    // Its dev dependency @svc/plugin-api holds types only; the real host answers the import with
    // its hook, and inside the test runner the sandbox's stand-in does (see sandbox.ts).
    await rm(join(pkgDir, "node_modules", "@svc"), { recursive: true });
    await symlink(pkgDir, join(sb.cwd, "node_modules", "svc-adapter-hello"), "junction");
  });
  afterAll(() => sb.cleanup());

  it("the guide's other TypeScript example (a target) type-checks against @svc/plugin-api", async () => {
    const doc = await readFile(join(REPO_ROOT, "docs/writing-an-adapter.md"), "utf8");
    const blocks = [...doc.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThan(0);
    const dir = join(sb.src, "guide-examples");
    await mkdir(join(dir, "src"), { recursive: true });
    await Promise.all(blocks.map((b, i) => writeFile(join(dir, "src", `example-${i}.ts`), b)));
    const tsconfig = {
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: true,
        noEmit: true,
        types: ["node"],
      },
      include: ["src"],
    };
    await writeFile(join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
    execFileSync(process.execPath, [join(REPO_ROOT, "node_modules/typescript/bin/tsc"), "-p", dir], { stdio: "pipe" });
  });

  it("builds, loads from the cwd and emits its event through the PluginContext", async () => {
    const c = await createContainer({ home: sb.home, env: sb.env });
    const got: SvcEvent[] = [];
    resolve(c, SERVICES).provide("sentinels", {
      ingest: async (_p: string, events: SvcEvent[]) => void got.push(...events),
    } as unknown as SentinelIngress);
    const registry = resolve(c, PLUGINS);
    await loadPlugins(registry, { ids: ["svc-adapter-hello"], env: sb.env, cwd: sb.cwd, builtins: false });
    expect(registry.failures).toEqual([]);
    expect(registry.get("provider", "hello")!.source).toMatchObject({ resolvedFrom: "cwd", version: "1.0.0" });
    const hello = await pluginInstance(c, "provider", "hello");
    await hello.pollNow!();
    expect(got).toEqual([
      {
        id: "hello-1",
        type: "hello.greeting.sent",
        subjects: ["hello:world"],
        time: expect.any(String),
        data: { count: 1 },
      },
    ]);
  });

  it("`svc adapters ls --load` shows it; a second package of the same kind later in adapters wins; a broken one makes it exit 1", async () => {
    const alt = await sb.place("cwd", "svc-fixture-provider", "svc-adapter-hello-too");
    const pj = JSON.parse(await readFile(join(alt, "package.json"), "utf8"));
    pj.name = "svc-adapter-hello-too";
    pj["svc-adapter"].plugins[0].kind = "hello";
    await writeFile(join(alt, "package.json"), JSON.stringify(pj));
    await writeFile(
      join(alt, "index.js"),
      (await readFile(join(alt, "index.js"), "utf8")).replace('kind: "fixture-ticks"', 'kind: "hello"'),
    );
    await sb.place("cwd", "svc-fixture-throws");
    await sb.writeConfig({ adapters: ["svc-adapter-hello", "svc-fixture-throws", "svc-adapter-hello-too"] });
    const r = await runCli(["adapters", "ls", "--load"], { home: sb.home, cwd: sb.cwd, env: sb.env });
    // The others still load and are listed; the broken one is named on stderr and the exit is 1.
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toContain("1 adapter package(s) failed to load: svc-fixture-throws (import)");
    expect(r.stdout).toMatch(/svc-adapter-hello@1\.0\.0 +resolved from cwd/);
    expect(r.stdout).toMatch(/provider hello +lost to svc-adapter-hello-too/);
    expect(r.stdout).toMatch(/provider hello +wins \(replaces provider hello of package svc-adapter-hello\)/);
    expect(r.stdout).toMatch(
      /svc-fixture-throws \(import\): importing \.\/index\.js \(provider fixture-throws\) failed: fixture entry exploded at import/,
    );
  });
});
