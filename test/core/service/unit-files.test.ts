/**
 * The unit files `svc service install` writes, checked by the real tools: the systemd unit by
 * `systemd-analyze --user verify` (which also checks that ExecStart's binary exists), the launchd
 * plist by Python's plistlib (a real property-list parser; plutil exists only on macOS). Paths with
 * spaces, quotes, `%` and `$` must come through exactly.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile, chmod } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchdPlist } from "../../../core/service/launchd-plist.js";
import { MARKER, type ServiceSpec } from "../../../core/service/service-spec.js";
import { quoteExecArg, systemdUnit } from "../../../core/service/systemd-unit.js";

const has = (bin: string, args: string[]) => spawnSync(bin, args, { stdio: "ignore" }).status === 0;
const ANALYZE = has("systemd-analyze", ["--version"]);
const PLISTLIB = has("python3", ["-c", "import plistlib"]);

let dir: string;
let spec: ServiceSpec;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "svc unit '$x' %h "));
  const cli = join(dir, 'dist dir "q"', "svc.js");
  await mkdir(join(dir, 'dist dir "q"'), { recursive: true });
  await writeFile(cli, "");
  spec = {
    name: "svc-test",
    home: join(dir, "home with space %i $HOME"),
    argv: [process.execPath, cli, "serve"],
    path: "/usr/local/bin:/usr/bin:/bin",
  };
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the systemd user unit", () => {
  it("quotes by systemd's rules: safe words bare, others double-quoted, % and $ doubled", () => {
    expect(quoteExecArg("/usr/bin/node")).toBe("/usr/bin/node");
    expect(quoteExecArg("/a b/c")).toBe('"/a b/c"');
    expect(quoteExecArg('/a "b"\\c')).toBe('"/a \\"b\\"\\\\c"');
    expect(quoteExecArg("/a%b$c")).toBe('"/a%%b$$c"');
  });

  it("carries svc's marker, ExecStart, SVC_HOME, Restart and WantedBy", () => {
    const unit = systemdUnit(spec);
    expect(unit.split("\n")[0]).toBe(`# ${MARKER}`);
    expect(unit).toMatch(/^Restart=on-failure$/m);
    expect(unit).toMatch(/^\[Install\]\nWantedBy=default\.target$/m);
    expect(unit).toMatch(/^ExecStart=\S+ ".*svc\.js" serve$/m);
    expect(unit).toContain(
      `Environment="SVC_HOME=${dir.replace(/%/g, "%%").replace(/'/g, "'")}/home with space %%i $HOME"`,
    );
  });

  it.skipIf(!ANALYZE)("passes systemd-analyze --user verify, paths with spaces, quotes, % and $ included", async () => {
    const runtime = await mkdtemp(join(tmpdir(), "svc-xdg-runtime-"));
    await chmod(runtime, 0o700);
    const file = join(dir, "svc-test.service");
    await writeFile(file, systemdUnit(spec));
    // The user manager's verify needs a runtime directory (none in a container without a login session).
    const r = spawnSync("systemd-analyze", ["--user", "verify", file], {
      env: { ...process.env, XDG_RUNTIME_DIR: runtime },
      encoding: "utf8",
    });
    await rm(runtime, { recursive: true, force: true });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    // And it does catch a unit whose program is missing (the check is real).
    await writeFile(file, systemdUnit({ ...spec, argv: [join(dir, "no such node"), ...spec.argv.slice(1)] }));
    const runtime2 = await mkdtemp(join(tmpdir(), "svc-xdg-runtime-"));
    const bad = spawnSync("systemd-analyze", ["--user", "verify", file], {
      env: { ...process.env, XDG_RUNTIME_DIR: runtime2 },
      encoding: "utf8",
    });
    await rm(runtime2, { recursive: true, force: true });
    expect(bad.stderr).toContain("no such node");
    expect(bad.status).not.toBe(0);
  });
  it.skipIf(ANALYZE)("systemd-analyze verify: skipped, systemd-analyze is not installed on this machine", () => {});

  it("ExecStart's words, unquoted by systemd's rules, are exactly the daemon's argv", () => {
    const exec = /^ExecStart=(.*)$/m.exec(systemdUnit(spec))![1]!;
    const words = [...exec.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)].map((m) =>
      (m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2]!).replace(/%%/g, "%").replace(/\$\$/g, "$"),
    );
    expect(words).toEqual(spec.argv);
  });
});

describe("the launchd agent", () => {
  it.skipIf(!PLISTLIB)(
    "parses as a property list with the daemon's argv, SVC_HOME, RunAtLoad, KeepAlive and stderr path",
    () => {
      const text = launchdPlist(spec);
      expect(text).toContain(`<!-- ${MARKER} -->`);
      const parsed = JSON.parse(
        execFileSync(
          "python3",
          ["-c", "import plistlib,sys,json; print(json.dumps(plistlib.loads(sys.stdin.buffer.read())))"],
          {
            input: text,
            encoding: "utf8",
          },
        ),
      ) as Record<string, unknown>;
      expect(parsed).toEqual({
        Label: "dev.svc.daemon.svc-test",
        ProgramArguments: spec.argv,
        EnvironmentVariables: { SVC_HOME: spec.home, PATH: spec.path },
        RunAtLoad: true,
        KeepAlive: { SuccessfulExit: false },
        StandardErrorPath: join(spec.home, "logs", "launchd.err"),
        ProcessType: "Background",
      });
      expect(launchdPlist({ ...spec, name: "svc" })).toContain("<string>dev.svc.daemon</string>");
    },
  );
  it.skipIf(PLISTLIB)("plist parse: skipped, python3's plistlib is not available here", () => {});
});
