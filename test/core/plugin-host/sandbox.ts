/**
 * A temporary world for plugin-host tests: an install location, a cwd and a source folder, and
 * the fixture packages copied in on demand.
 *
 * A real svc provides `@svc/plugin-api` (and the older `svc/plugin-api`) to the plugins it loads
 * through Node's resolution hooks (core/plugin-host/api-hooks.ts; proved without any of this by
 * test/e2e/adapter-install-paths.test.ts and the `svc adapters init` tests). Plugins imported
 * inside the test runner are resolved by vitest's module runner instead, which Node's hooks do not
 * reach, so each node_modules here gets what the hook would answer: `@svc/plugin-api`
 * re-exporting the built API (its types from the types-only package authors install), and `svc`.
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { FIXTURES, REPO_ROOT } from "../../support/paths.js";

export const PACKAGES = join(FIXTURES, "packages");

export interface Sandbox {
  root: string;
  home: string;
  install: string;
  cwd: string;
  /** A folder outside both, holding package sources (for `svc adapters install ./folder`). */
  src: string;
  env: NodeJS.ProcessEnv;
  /** Copies fixture `name` into `<where>/node_modules/<as>`. */
  place(where: "install" | "cwd", name: string, as?: string): Promise<string>;
  /** Copies fixture `name` into src/ and returns its path. */
  source(name: string): Promise<string>;
  writeConfig(config: Record<string, unknown>): Promise<void>;
  cleanup(): Promise<void>;
}

async function provideApi(nodeModules: string): Promise<void> {
  const dir = join(nodeModules, "@svc", "plugin-api");
  await mkdir(dir, { recursive: true });
  const pkg = {
    name: "@svc/plugin-api",
    type: "module",
    exports: { ".": { types: "./index.d.ts", default: "./index.js" } },
  };
  await writeFile(join(dir, "package.json"), JSON.stringify(pkg));
  await writeFile(
    join(dir, "index.js"),
    `export * from ${JSON.stringify(pathToFileURL(join(REPO_ROOT, "dist/core/plugin-api/index.js")).href)};\n`,
  );
  await writeFile(
    join(dir, "index.d.ts"),
    `export * from ${JSON.stringify(join(REPO_ROOT, "dist/plugin-api-types/core/plugin-api/index.js"))};\n`,
  );
  await symlink(REPO_ROOT, join(nodeModules, "svc"), "junction");
}

export async function makeSandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), "svc-ph-"));
  const home = join(root, "home");
  const install = join(root, "install");
  const cwd = join(root, "cwd");
  const src = join(root, "src");
  for (const dir of [home, install, cwd, src]) {
    await mkdir(join(dir, "node_modules"), { recursive: true });
    if (dir !== home) await provideApi(join(dir, "node_modules"));
  }
  await mkdir(join(src, "node_modules", "@types"));
  await symlink(
    join(REPO_ROOT, "node_modules", "@types", "node"),
    join(src, "node_modules", "@types", "node"),
    "junction",
  );
  const base = { install, cwd };
  return {
    root,
    home,
    install,
    cwd,
    src,
    env: { SVC_HOME: home, SVC_INSTALL_DIR: install },
    async place(where, name, as = name) {
      const dest = join(base[where], "node_modules", as);
      await cp(join(PACKAGES, name), dest, { recursive: true });
      return dest;
    },
    async source(name) {
      const dest = join(src, name);
      await cp(join(PACKAGES, name), dest, { recursive: true });
      return dest;
    },
    writeConfig: (config) => writeFile(join(home, "config.json"), JSON.stringify(config, null, 2)),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}
