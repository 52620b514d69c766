/**
 * `svc service install|uninstall|status` through the real CLI, in a temporary HOME and
 * XDG_CONFIG_HOME, with no user bus (XDG_RUNTIME_DIR empty, DBUS_SESSION_BUS_ADDRESS pointing
 * nowhere), as in a container: the unit is written, systemd-analyze accepts it, the commands to
 * run are printed; uninstall removes it (and the enable link svc's commands made) and refuses a
 * file svc did not write.
 */
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLI_PATH } from "../support/paths.js";
import { runCli } from "../support/cli.js";

const LINUX = process.platform === "linux";
const ANALYZE = spawnSync("systemd-analyze", ["--version"], { stdio: "ignore" }).status === 0;

describe.skipIf(!LINUX)("svc service on Linux (systemd user unit), without a user bus", () => {
  let root: string;
  let env: NodeJS.ProcessEnv;
  let home: string;
  let unitDir: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "svc-service "));
    const runtime = join(root, "runtime");
    await mkdir(runtime, { mode: 0o700 });
    home = join(root, "user home", ".svc");
    env = {
      HOME: join(root, "user home"),
      XDG_CONFIG_HOME: join(root, "config dir"),
      XDG_RUNTIME_DIR: runtime,
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${join(runtime, "no-bus")}`,
    };
    unitDir = join(root, "config dir", "systemd", "user");
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const svc = (args: string[], h = home) => runCli(["service", ...args], { home: h, env });

  it("status before install: not installed, exit 3", async () => {
    const r = await svc(["status", "--json"]);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({
      installed: false,
      unit: "svc.service",
      path: join(unitDir, "svc.service"),
    });
  });

  it("install writes svc.service under XDG_CONFIG_HOME and prints the systemctl commands it could not run", async () => {
    const r = await svc(["install"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const file = join(unitDir, "svc.service");
    expect(r.stdout).toContain(`wrote ${file}`);
    expect(r.stdout).toContain("systemctl --user does not answer");
    expect(r.stdout).toContain("systemctl --user daemon-reload");
    expect(r.stdout).toContain("systemctl --user enable --now svc.service");
    const unit = await readFile(file, "utf8");
    expect(unit).toContain(
      `ExecStart=${process.execPath} ${CLI_PATH.includes(" ") ? `"${CLI_PATH}"` : CLI_PATH} serve`,
    );
    expect(unit).toContain(`Environment="SVC_HOME=${home}"`);
    expect((await stat(file)).mode & 0o777).toBe(0o644);
    if (ANALYZE) {
      const v = spawnSync("systemd-analyze", ["--user", "verify", file], {
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
      expect(v.stderr).toBe("");
      expect(v.status).toBe(0);
    }
    const s = await svc(["status", "--json"]);
    expect(s.code).toBe(0);
    expect(JSON.parse(s.stdout)).toMatchObject({ installed: true, writtenBySvc: true, platform: "systemd" });
    expect(JSON.parse(s.stdout).managerUnreachable).toContain("systemctl --user does not answer");
  });

  it("install again rewrites its own file; uninstall removes it and the enable link pointing at it", async () => {
    expect((await svc(["install", "--no-start", "--json"])).code).toBe(0);
    const file = join(unitDir, "svc.service");
    const wants = join(unitDir, "default.target.wants");
    await mkdir(wants, { recursive: true });
    await symlink(file, join(wants, "svc.service"));
    const r = await svc(["uninstall", "--json"]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ removed: true, removedLinks: [join(wants, "svc.service")] });
    expect(out.toRun).toEqual(["systemctl --user stop svc.service", "systemctl --user daemon-reload"]);
    await expect(stat(file)).rejects.toThrow(/ENOENT/);
    await expect(stat(join(wants, "svc.service"))).rejects.toThrow(/ENOENT/);
    const again = await svc(["uninstall"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("not installed");
  });

  it("svc doctor warns when the installed unit runs another node or svc than this one", async () => {
    const file = join(unitDir, "svc.service");
    const doctorOn = async () =>
      (
        JSON.parse((await runCli(["doctor", "--json"], { home, env })).stdout) as {
          findings: Array<{ file: string; severity: string; message: string; fix: string }>;
        }
      ).findings.filter((f) => f.file === "env:service");
    expect((await svc(["install", "--no-start"])).code).toBe(0);
    expect(await doctorOn()).toEqual([]);
    const unit = await readFile(file, "utf8");
    await writeFile(file, unit.replace(/^ExecStart=\S+/m, "ExecStart=/opt/node-18/bin/node"));
    expect(await doctorOn()).toEqual([
      expect.objectContaining({
        severity: "warn",
        message: expect.stringContaining("runs ExecStart=/opt/node-18/bin/node"),
        fix: "run `svc service install` again (it rewrites its own unit)",
      }),
    ]);
    expect((await svc(["install", "--no-start"])).code).toBe(0);
    expect(await doctorOn()).toEqual([]);
    expect((await svc(["uninstall"])).code).toBe(0);
  });

  it("a file svc did not write is neither overwritten nor removed", async () => {
    const file = join(unitDir, "svc.service");
    const mine = "[Service]\nExecStart=/bin/true\n";
    await writeFile(file, mine);
    for (const verb of ["install", "uninstall"]) {
      const r = await svc([verb]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("was not written by svc");
      expect(r.stderr).toContain("never changes or deletes a file it did not create");
      expect(await readFile(file, "utf8")).toBe(mine);
    }
    const s = await svc(["status", "--json"]);
    expect(JSON.parse(s.stdout)).toMatchObject({ installed: true, writtenBySvc: false });
    await rm(file);
  });

  it("another SVC_HOME gets svc-<hash>.service; --name picks the name; a bad name is a usage error", async () => {
    const other = join(root, "other home");
    const hash = createHash("sha256").update(other).digest("hex").slice(0, 8);
    const r = await svc(["install", "--json"], other);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      unit: `svc-${hash}.service`,
      path: join(unitDir, `svc-${hash}.service`),
    });
    const named = await svc(["install", "--name", "work.service", "--json"], other);
    expect(JSON.parse(named.stdout)).toMatchObject({ unit: "work.service" });
    expect(await readFile(join(unitDir, "work.service"), "utf8")).toContain(`Environment="SVC_HOME=${other}"`);
    const bad = await svc(["install", "--name", "../x"], other);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("is not a usable service name");
    for (const n of [`svc-${hash}`, "work"]) expect((await svc(["uninstall", "--name", n], other)).code).toBe(0);
  });
});
