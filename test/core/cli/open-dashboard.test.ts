/**
 * Issue 43, finding 1: `svc open` counts only an opener that exited 0 as an opened browser. An
 * opener that exits non-zero (no browser), a missing opener and a session without a display each
 * get the reason on stderr and the one-time link on stdout, exit 0, and the link works; it is in
 * no daemon log line. The real CLI against a real daemon, with PATH holding a fake `xdg-open`
 * (or none). Linux and the other xdg-open platforms only.
 */
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { noDisplayReason } from "../../../core/cli/browser-opener.js";
import { runCli, useDaemonProcess } from "../../support/cli.js";

const xdgPlatform = process.platform !== "darwin" && process.platform !== "win32";
const LINK = /^http:\/\/127\.0\.0\.1:\d+\/ui\/#login=([\w-]{20,})$/;

describe.skipIf(!xdgPlatform)("svc open: the opener's exit status decides (real daemon)", () => {
  const fx = useDaemonProcess({ prefix: "svc-open-dashboard-" });
  let bins: string;
  /** A PATH directory holding an `xdg-open` that records its arguments in `calls` and exits `code`. */
  const fakeOpener = async (name: string, code: number) => {
    const dir = join(bins, name);
    await mkdir(dir);
    await writeFile(join(dir, "xdg-open"), `#!/bin/sh\nprintf '%s\\n' "$*" >> "${dir}/calls"\nexit ${code}\n`);
    await chmod(join(dir, "xdg-open"), 0o755);
    return {
      path: dir,
      calls: async () => (existsSync(join(dir, "calls")) ? await readFile(join(dir, "calls"), "utf8") : ""),
    };
  };
  beforeAll(async () => {
    bins = await mkdtemp(join(tmpdir(), "svc-open-bins-"));
  });
  afterAll(async () => {
    await rm(bins, { recursive: true, force: true });
  });

  const open = (args: string[], env: NodeJS.ProcessEnv) =>
    runCli(["open", ...args], { home: fx.home, env: { DISPLAY: undefined, WAYLAND_DISPLAY: undefined, ...env } });
  const redirectFile = () => join(fx.home, "dashboard-open.html");

  /** The printed link logs a browser in once: it is a real one-time link. */
  const expectWorkingLink = async (code: string) => {
    const login = () =>
      fetch(`${fx.daemon.baseUrl}/ui/login`, {
        method: "POST",
        headers: { "content-type": "application/json", origin: fx.daemon.baseUrl },
        body: JSON.stringify({ code }),
      });
    expect((await login()).status).toBe(200);
    expect((await login()).status).toBe(401);
  };
  /** The link printed as a fallback, with the reason on stderr; exit 0. */
  const expectFallback = async (r: { code: number; stdout: string; stderr: string }, reason: string) => {
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`warning: no browser could be opened (${reason}): open this one-time login link yourself\n`);
    const [link, note, ...rest] = r.stdout.split("\n");
    expect(r.stdout).not.toContain("opened the svc dashboard");
    expect(link).toMatch(LINK);
    expect(note).toBe("(this link works once, within 60 s; run `svc open` again for a new one)");
    expect(rest).toEqual([""]);
    const code = LINK.exec(link!)![1]!;
    expect(fx.daemon.logs()).not.toContain(code);
    expect(existsSync(redirectFile())).toBe(false);
    await expectWorkingLink(code);
  };

  it("an xdg-open that exits 3 (no browser): the reason and the link, exit 0", async () => {
    const opener = await fakeOpener("fails", 3);
    const r = await open([], { PATH: opener.path, DISPLAY: ":0" });
    await expectFallback(r, "xdg-open exited with status 3");
    // It was run, on the redirect file (the code is not in its argv).
    const calls = await opener.calls();
    expect(calls).toBe(`file://${redirectFile()}\n`);
  });

  it("no opener on PATH: says xdg-open is not installed and prints the link, exit 0", async () => {
    const empty = join(bins, "empty");
    await mkdir(empty);
    await expectFallback(await open([], { PATH: empty, DISPLAY: ":0" }), "xdg-open is not installed");
  });

  it("no display: does not run the opener; says so and prints the link, exit 0", async () => {
    const opener = await fakeOpener("unused", 0);
    await expectFallback(
      await open([], { PATH: opener.path }),
      "no display (neither DISPLAY nor WAYLAND_DISPLAY is set)",
    );
    expect(await opener.calls()).toBe("");
  });

  it("--json: opened false with the reason", async () => {
    const opener = await fakeOpener("fails-json", 3);
    const r = await open(["--json"], { PATH: opener.path, WAYLAND_DISPLAY: "wayland-0" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual({
      url: expect.stringMatching(LINK),
      expiresAt: expect.any(Number),
      opened: false,
      reason: "xdg-open exited with status 3",
    });
  });

  it("an xdg-open that exits 0: says the dashboard was opened and prints no link", async () => {
    const opener = await fakeOpener("works", 0);
    const r = await open([], { PATH: opener.path, DISPLAY: ":0" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("opened the svc dashboard in your browser\n");
    expect(await opener.calls()).toBe(`file://${redirectFile()}\n`);
    // The browser reads the code from the redirect file, which stays for it.
    const html = await readFile(redirectFile(), "utf8");
    const code = /#login=([\w-]{20,})/.exec(html)![1]!;
    expect(fx.daemon.logs()).not.toContain(code);
    await expectWorkingLink(code);
  });
});

describe("noDisplayReason", () => {
  it("Linux without DISPLAY or WAYLAND_DISPLAY has no display; macOS and Windows are not asked", () => {
    expect(noDisplayReason("linux", {})).toMatch(/^no display/);
    expect(noDisplayReason("linux", { DISPLAY: "" })).toMatch(/^no display/);
    expect(noDisplayReason("linux", { DISPLAY: ":0" })).toBeUndefined();
    expect(noDisplayReason("freebsd", { WAYLAND_DISPLAY: "wayland-0" })).toBeUndefined();
    expect(noDisplayReason("darwin", {})).toBeUndefined();
    expect(noDisplayReason("win32", {})).toBeUndefined();
  });
});
