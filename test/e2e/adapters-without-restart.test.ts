/**
 * An adapter package installed with `svc adapters install` while the real daemon runs is used by
 * `svc sessions start/run` without a restart; an unknown adapter's error names what is installed.
 * One removed with `svc adapters rm` is refused by the next `svc sessions start`, without a
 * restart either (issue 42, finding 5).
 */
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { makeSandbox } from "../core/plugin-host/sandbox.js";

const cli = (args: string[]) => runCli(args, { home: fx.sandbox.home, cwd: fx.sandbox.cwd, env: fx.sandbox.env });

const fx = useDaemonProcess({
  makeHome: makeSandbox,
  setup: async (sb) => {
    await sb.writeConfig({ adapters: [] });
    return { env: { SVC_INSTALL_DIR: sb.install } };
  },
});

describe("adapters installed while the daemon runs", () => {
  it("svc sessions start/run use a package installed after the daemon started; an unknown adapter names the installed ones", async () => {
    const pid = (await (await fx.daemon.fetch("/health")).json()) as Record<string, unknown>;
    const before = await cli(["sessions", "start", "--adapter", "parrot"]);
    expect(before.code).toBe(1);
    expect(before.stderr).toContain('no adapter "parrot"');

    const install = await cli(["adapters", "install", await fx.sandbox.source("svc-adapter-parrot")]);
    expect(install.code, install.stderr).toBe(0);

    const started = await cli(["sessions", "start", "--adapter", "parrot", "--json"]);
    expect(started.code, started.stderr).toBe(0);
    expect(JSON.parse(started.stdout).descriptor).toMatchObject({
      adapter: "parrot",
      source: "package",
      kind: "agent",
    });
    const ran = await cli(["sessions", "run", "--adapter", "parrot", "--prompt", "polly"]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toBe("polly polly\n");

    const unknown = await cli(["sessions", "start", "--adapter", "no-such-agent"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no adapter "no-such-agent"');
    expect(unknown.stderr).toContain("packages parrot (svc-adapter-parrot)");
    expect(unknown.stderr).toMatch(/catalog [a-z-]+(, [a-z-]+)*/);
    // The same daemon all along.
    expect(await (await fx.daemon.fetch("/health")).json()).toMatchObject({ pid: pid.pid });
  });

  it("svc adapters rm is seen by the next svc sessions start: refused, naming what is installed", async () => {
    const pid = (await (await fx.daemon.fetch("/health")).json()) as Record<string, unknown>;
    expect((await cli(["sessions", "start", "--adapter", "parrot", "--json"])).code).toBe(0);
    const rm = await cli(["adapters", "rm", "svc-adapter-parrot"]);
    expect(rm.code, rm.stderr).toBe(0);

    const after = await cli(["sessions", "start", "--adapter", "parrot"]);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('no adapter "parrot": no @svc/adapter-parrot package');
    expect(after.stderr).toContain("packages (none)");
    const ran = await cli(["sessions", "run", "--adapter", "parrot", "--prompt", "polly"]);
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain('no adapter "parrot"');
    // The daemon's load report no longer lists it either.
    const adapters = await (await fx.daemon.fetch("/adapters")).text();
    expect(adapters).not.toContain("svc-adapter-parrot");

    // Installed again, it is used again, still without a restart.
    const install = await cli(["adapters", "install", await fx.sandbox.source("svc-adapter-parrot")]);
    expect(install.code, install.stderr).toBe(0);
    expect((await cli(["sessions", "run", "--adapter", "parrot", "--prompt", "again"])).stdout).toBe("again again\n");
    expect(await (await fx.daemon.fetch("/health")).json()).toMatchObject({ pid: pid.pid });
  });
});
