/**
 * Issue 13, "Adapter packages": the host provides its plugin API to every plugin at run time,
 * whatever the install path. A package that imports `@svc/plugin-api`, with no dependency on svc
 * and no copy of it anywhere near, loads from a folder install, a tarball install and the user's
 * project directory; the real daemon sets it up and reports it ready.
 */
import { execFileSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startDaemonProcess } from "../support/cli.js";

const MANIFEST = { schema: "svc/adapter/v1", svc: ">=0.20.0", plugins: [{ type: "provider", kind: "lonely", entry: "./index.js", description: "needs no copy of svc" }] };
const INDEX = `import { defineProvider } from "@svc/plugin-api";
export default defineProvider({
  kind: "lonely",
  setup: () => ({ readiness: async () => ({ ready: true, detail: "loaded with the host's plugin API" }) }),
});
`;

async function writePackage(dir: string, manifest: unknown = MANIFEST): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "package.json"), JSON.stringify({ name: "svc-adapter-lonely", version: "1.0.0", type: "module", "svc-adapter": manifest }, null, 2));
  await writeFile(join(dir, "index.js"), INDEX);
}

describe("an adapter package with no copy of svc loads wherever it is installed", () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "svc-install-paths-"));
    await writePackage(join(root, "src", "svc-adapter-lonely"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  async function homeFor(name: string): Promise<{ home: string; install: string; cwd: string; env: NodeJS.ProcessEnv }> {
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
    const listing = JSON.parse(ls.stdout) as { packages: Array<{ id: string; plugins: Array<{ status: string }> }>; failures: Array<{ package: string; error: string }> };
    expect(listing.failures.filter((f) => f.package === "svc-adapter-lonely")).toEqual([]);
    expect(listing.packages.find((p) => p.id === "svc-adapter-lonely")?.plugins[0]?.status).toBe("wins");
    const d = await startDaemonProcess({ home: t.home, env: t.env, cwd: t.cwd });
    try {
      const res = await d.fetch("/sentinel-providers");
      const { providers } = (await res.json()) as { providers: Array<{ kind: string; readiness: { ready: boolean; detail: string } }> };
      expect(providers.find((p) => p.kind === "lonely")?.readiness).toEqual({ ready: true, detail: "loaded with the host's plugin API" });
    } finally {
      await d.stop();
    }
  }

  it("from a folder (svc adapters install ./folder, which npm links)", async () => {
    const t = await homeFor("folder");
    const r = await runCli(["adapters", "install", join(root, "src", "svc-adapter-lonely")], { home: t.home, cwd: t.cwd, env: t.env });
    expect(r.code, r.stderr).toBe(0);
    await expectLoadsAndRuns(t);
  });

  it("from a tarball (npm pack, then svc adapters install ./x.tgz)", async () => {
    const t = await homeFor("tarball");
    const out = execFileSync("npm", ["pack", "--silent", "--pack-destination", root, join(root, "src", "svc-adapter-lonely")], { encoding: "utf8" }).trim().split("\n").at(-1)!;
    const r = await runCli(["adapters", "install", join(root, out)], { home: t.home, cwd: t.cwd, env: t.env });
    expect(r.code, r.stderr).toBe(0);
    await expectLoadsAndRuns(t);
  });

  it("from the project directory (the cwd's node_modules)", async () => {
    const t = await homeFor("cwd");
    await cp(join(root, "src", "svc-adapter-lonely"), join(t.cwd, "node_modules", "svc-adapter-lonely"), { recursive: true });
    await writeFile(join(t.home, "config.json"), JSON.stringify({ adapters: ["svc-adapter-lonely"] }));
    await expectLoadsAndRuns({ ...t, cwd: t.cwd });
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
