/**
 * A temporary world for plugin-host tests: an install location and a cwd, each with a
 * `node_modules/svc` link to this checkout (what an author's `npm install` of the svc peer gives),
 * and the fixture packages copied in on demand.
 */
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  /** Copies fixture `name` into src/ (with the svc link) and returns its path. */
  source(name: string): Promise<string>;
  writeConfig(config: Record<string, unknown>): Promise<void>;
  cleanup(): Promise<void>;
}

export async function makeSandbox(): Promise<Sandbox> {
  const root = await mkdtemp(join(tmpdir(), "svc-ph-"));
  const home = join(root, "home");
  const install = join(root, "install");
  const cwd = join(root, "cwd");
  const src = join(root, "src");
  for (const dir of [home, install, cwd, src]) {
    await mkdir(join(dir, "node_modules"), { recursive: true });
    if (dir !== home) await symlink(REPO_ROOT, join(dir, "node_modules", "svc"), "junction");
  }
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
