import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeTempHome, runCli, startDaemonProcess, type DaemonProcess } from "../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
const daemons: DaemonProcess[] = [];
beforeEach(async () => ({ home, cleanup } = await makeTempHome()));
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((d) => d.kill9()));
  await cleanup();
});

describe("svc serve", () => {
  it("writes runtime.json (0600, pid, port, per-boot token) and removes it at a clean stop", async () => {
    const d = await startDaemonProcess({ home });
    daemons.push(d);
    const file = join(home, "runtime.json");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const info = JSON.parse(await readFile(file, "utf8"));
    expect(info).toMatchObject({ pid: d.child.pid, port: d.port, bind: "127.0.0.1" });
    expect(info.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const health = await d.fetch("/health", { auth: false });
    expect(health.status).toBe(200);
    expect(await d.stop()).toBe(0);
    await expect(stat(file)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("exits at SIGTERM after its providers' readiness was asked (a stopped daemon used to stay alive)", async () => {
    const d = await startDaemonProcess({ home });
    daemons.push(d);
    expect((await d.fetch("/sentinel-providers")).status).toBe(200);
    expect(await d.stop()).toBe(0);
  });

  it("stops cleanly at a SIGTERM sent the moment runtime.json appears, before start-up has returned", async () => {
    // startDaemonProcess returns as soon as runtime.json names the child; the handlers used to be
    // installed only after start-up returned, so such a SIGTERM killed the process (exit null).
    for (let i = 0; i < 5; i++) {
      const d = await startDaemonProcess({ home });
      daemons.push(d);
      expect(await d.stop(), d.logs()).toBe(0);
      await expect(stat(join(home, "runtime.json"))).rejects.toMatchObject({ code: "ENOENT" });
    }
  });

  it("refuses a second daemon on the same home with a clear message", async () => {
    const d = await startDaemonProcess({ home });
    daemons.push(d);
    const second = await runCli(["serve", "--port", "0"], { home });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain("already running");
    expect(second.stderr).toContain(String(d.child.pid));
  });

  it("starts over the stale runtime.json of a daemon killed with -9", async () => {
    const first = await startDaemonProcess({ home });
    await first.kill9();
    const second = await startDaemonProcess({ home });
    daemons.push(second);
    expect(second.port).not.toBe(0);
    expect((await second.fetch("/health", { auth: false })).status).toBe(200);
  });

  it("gives each boot a fresh token", async () => {
    const a = await startDaemonProcess({ home });
    await a.stop();
    const b = await startDaemonProcess({ home });
    daemons.push(b);
    expect(b.token).not.toBe(a.token);
  });

  it("reports a busy port as a clear error", async () => {
    const d = await startDaemonProcess({ home });
    daemons.push(d);
    const other = await makeTempHome();
    try {
      const res = await runCli(["serve", "--port", String(d.port)], { home: other.home });
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`port ${d.port}`);
      expect(res.stderr).toContain("already in use");
    } finally {
      await other.cleanup();
    }
  });

  it("rejects a bad --port as a usage error (exit 2)", async () => {
    const res = await runCli(["serve", "--port", "http"], { home });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain("--port");
  });

  it("a config.json that is not JSON stops the daemon from starting, naming the file", async () => {
    await writeFile(join(home, "config.json"), "{ nope");
    const res = await runCli(["serve", "--port", "0"], { home });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(join(home, "config.json"));
  });
});
