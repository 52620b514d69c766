/**
 * Issue 13, "Adapter packages": the host provides its plugin API to every plugin at run time,
 * whatever the install path. The package of docs/writing-an-adapter.md's walk-through, written
 * and built from the doc alone (it imports `@svc/plugin-api`, has no dependency on svc, and only
 * the types-only @svc/plugin-api beside it), loads from a folder install, a tarball install, a
 * registry install (a local registry) and the user's project directory; the real daemon sets it
 * up, reports it ready and polls it.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startDaemonProcess } from "../support/cli.js";
import { buildAdapterWalkthrough } from "../support/readme.js";
import { REPO_ROOT } from "../support/paths.js";

/** The walk-through's package (docs/writing-an-adapter.md). */
const PKG = "svc-adapter-hello";

const MANIFEST = {
  schema: "svc/adapter/v1",
  svc: ">=0.20.0",
  plugins: [{ type: "provider", kind: "lonely", entry: "./index.js", description: "needs no copy of svc" }],
};
const INDEX = `import { defineProvider } from "@svc/plugin-api";
export default defineProvider({
  kind: "lonely",
  setup: () => ({ readiness: async () => ({ ready: true, detail: "loaded with the host's plugin API" }) }),
});
`;

async function writePackage(dir: string, manifest: unknown = MANIFEST): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "package.json"),
    JSON.stringify({ name: "svc-adapter-lonely", version: "1.0.0", type: "module", "svc-adapter": manifest }, null, 2),
  );
  await writeFile(join(dir, "index.js"), INDEX);
}

describe("an adapter package with no copy of svc loads wherever it is installed", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "svc-install-paths-"));
    expect(await buildAdapterWalkthrough(join(root, "src", PKG))).toEqual([
      "package.json",
      "src/index.ts",
      "tsconfig.json",
    ]);
  });

  it("the docs' package needs nothing of svc: no peer dependency, no dependency on svc or its plugin API at run time", async () => {
    const pj = JSON.parse(await readFile(join(root, "src", PKG, "package.json"), "utf8")) as Record<
      string,
      Record<string, string> | undefined
    >;
    expect(pj.peerDependencies).toBeUndefined();
    expect(pj.dependencies).toBeUndefined();
    expect(Object.keys(pj.devDependencies ?? {}).filter((d) => /^(svc|@svc\/svc)$/.test(d))).toEqual([]);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  async function homeFor(
    name: string,
  ): Promise<{ home: string; install: string; cwd: string; env: NodeJS.ProcessEnv }> {
    const home = join(root, name, "home");
    const install = join(root, name, "install");
    const cwd = join(root, name, "cwd");
    for (const d of [home, install, cwd]) await mkdir(d, { recursive: true });
    await writeFile(join(install, "package.json"), JSON.stringify({ name: "install-location", private: true }));
    return { home, install, cwd, env: { SVC_INSTALL_DIR: install } };
  }

  async function expectLoadsAndRuns(t: { home: string; cwd: string; env: NodeJS.ProcessEnv }): Promise<void> {
    const ls = await runCli(["adapters", "ls", "--load", "--json"], { home: t.home, cwd: t.cwd, env: t.env });
    expect(ls.code, ls.stderr).toBe(0);
    const listing = JSON.parse(ls.stdout) as {
      packages: Array<{ id: string; plugins: Array<{ status: string }> }>;
      failures: Array<{ package: string; error: string }>;
    };
    expect(listing.failures.filter((f) => f.package === PKG)).toEqual([]);
    expect(listing.packages.find((p) => p.id === PKG)?.plugins[0]?.status).toBe("wins");
    const d = await startDaemonProcess({ home: t.home, env: t.env, cwd: t.cwd });
    try {
      const res = await d.fetch("/sentinel-providers");
      const { providers } = (await res.json()) as {
        providers: Array<{ kind: string; readiness: { ready: boolean; detail: string } }>;
      };
      expect(providers.find((p) => p.kind === "hello")?.readiness).toEqual({
        ready: true,
        detail: "nothing to configure",
      });
      const polled = await d.fetch("/sentinels/poll-now", { method: "POST" });
      expect(((await polled.json()) as { polled: string[] }).polled).toContain("hello");
    } finally {
      await d.stop();
    }
  }

  it("from a folder (svc adapters install ./folder, which npm links)", async () => {
    const t = await homeFor("folder");
    const r = await runCli(["adapters", "install", join(root, "src", PKG)], { home: t.home, cwd: t.cwd, env: t.env });
    expect(r.code, r.stderr).toBe(0);
    await expectLoadsAndRuns(t);
  });

  it("from a tarball (npm pack, then svc adapters install ./x.tgz)", async () => {
    const t = await homeFor("tarball");
    const out = execFileSync("npm", ["pack", "--silent", "--pack-destination", root, join(root, "src", PKG)], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .at(-1)!;
    const r = await runCli(["adapters", "install", join(root, out)], { home: t.home, cwd: t.cwd, env: t.env });
    expect(r.code, r.stderr).toBe(0);
    await expectLoadsAndRuns(t);
  });

  it("from a registry (svc adapters install <name>, served by a local npm registry)", async () => {
    const t = await homeFor("registry");
    const tgzName = execFileSync("npm", ["pack", "--silent", "--pack-destination", root, join(root, "src", PKG)], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .at(-1)!;
    const tgz = await readFile(join(root, tgzName));
    const integrity = `sha512-${createHash("sha512").update(tgz).digest("base64")}`;
    const manifest = JSON.parse(await readFile(join(root, "src", PKG, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    // The two requests npm makes of a registry: the packument, then the tarball it names.
    const registry = createServer((req, res) => {
      const base = `http://127.0.0.1:${(registry.address() as { port: number }).port}`;
      if (req.url === `/${PKG}`) {
        const version = {
          ...manifest,
          _id: `${PKG}@1.0.0`,
          dist: { tarball: `${base}/${PKG}/-/${tgzName}`, integrity },
        };
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ name: PKG, "dist-tags": { latest: "1.0.0" }, versions: { "1.0.0": version } }));
      } else if (req.url === `/${PKG}/-/${tgzName}`)
        res.writeHead(200, { "content-type": "application/octet-stream" }).end(tgz);
      else res.writeHead(404).end("{}");
    });
    await new Promise<void>((r) => registry.listen(0, "127.0.0.1", r));
    try {
      const port = (registry.address() as { port: number }).port;
      const env = {
        ...t.env,
        npm_config_registry: `http://127.0.0.1:${port}/`,
        npm_config_cache: join(root, "registry", "npm-cache"),
      };
      const r = await runCli(["adapters", "install", PKG], { home: t.home, cwd: t.cwd, env });
      expect(r.code, r.stderr).toBe(0);
      expect(existsSync(join(t.install, "node_modules", PKG, "dist", "index.js"))).toBe(true);
      await expectLoadsAndRuns(t);
    } finally {
      registry.close();
    }
  });

  it("from the project directory (the cwd's node_modules)", async () => {
    const t = await homeFor("cwd");
    // As `npm install ../svc-adapter-hello` in a project: the package with its types-only node_modules.
    await cp(join(root, "src", PKG), join(t.cwd, "node_modules", PKG), { recursive: true, verbatimSymlinks: true });
    await writeFile(join(t.home, "config.json"), JSON.stringify({ adapters: [PKG] }));
    await expectLoadsAndRuns({ ...t, cwd: t.cwd });
  });

  it("by default into $SVC_HOME/adapters: svc's own package.json and lock untouched, and rm leaves no trace", async () => {
    const home = join(root, "default", "home");
    const cwd = join(root, "default", "cwd");
    await mkdir(cwd, { recursive: true });
    const own = async () =>
      Promise.all(["package.json", "package-lock.json"].map((f) => readFile(join(REPO_ROOT, f), "utf8")));
    const before = await own();
    const r = await runCli(["adapters", "install", join(root, "src", PKG)], { home, cwd });
    expect(r.code, r.stderr).toBe(0);
    const prefix = join(home, "adapters");
    expect(existsSync(join(prefix, "node_modules", PKG, "package.json"))).toBe(true);
    expect(existsSync(join(REPO_ROOT, "node_modules", PKG))).toBe(false);
    expect(await own()).toEqual(before);
    const ls = JSON.parse((await runCli(["adapters", "ls", "--load", "--json"], { home, cwd })).stdout) as {
      packages: Array<{ id: string; resolvedFrom: string; plugins: Array<{ status: string }> }>;
    };
    expect(ls.packages.find((p) => p.id === PKG)).toMatchObject({
      resolvedFrom: "install",
      plugins: [{ status: "wins" }],
    });
    const removed = await runCli(["adapters", "rm", PKG], { home, cwd });
    expect(removed.code, removed.stderr).toBe(0);
    // No trace: no file under $SVC_HOME names the package any more (config, the prefix's manifest and lock, node_modules).
    const files = (await readdir(home, { recursive: true, withFileTypes: true })).filter(
      (e) => e.isFile() || e.isSymbolicLink(),
    );
    for (const f of files)
      expect(
        await readFile(join(f.parentPath, f.name), "utf8").catch(() => ""),
        join(f.parentPath, f.name),
      ).not.toContain(PKG);
    expect(existsSync(join(prefix, "node_modules", PKG))).toBe(false);
    expect(await own()).toEqual(before);
  });

  it("install refuses a package whose manifest names an entry that is not there, and rolls back", async () => {
    const t = await homeFor("missing-entry");
    const src = join(root, "src-missing", "svc-adapter-lonely");
    await writePackage(src, { ...MANIFEST, plugins: [{ ...MANIFEST.plugins[0], entry: "./dist/index.js" }] });
    const r = await runCli(["adapters", "install", src], { home: t.home, cwd: t.cwd, env: t.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/declares provider lonely at \.\/dist\/index\.js, but no such file is in the package/);
    expect(await readdir(t.home)).not.toContain("config.json");
  });
});
