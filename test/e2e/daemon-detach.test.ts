/**
 * `svc start` / `svc serve --detach`, `svc stop` and `svc logs` against the built CLI and a real
 * detached daemon (issue 28's lifecycle verbs).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFile, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { daemonLogPath } from "../../core/runtime/log-file.js";
import { childEnv, makeTempHome, runCli, startDaemonProcess } from "../support/cli.js";
import { CLI_PATH } from "../support/paths.js";
import { processRunning } from "../support/process-alive.js";
import { until } from "../support/until.js";

let home: string;
let cleanup: () => Promise<void>;
const children: ChildProcess[] = [];
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-detach-")));
afterEach(async () => {
  // A detached daemon a failed test left: killed by the pid its runtime.json names.
  const info = await readRuntime();
  if (info && processRunning(info.pid)) process.kill(info.pid, "SIGKILL");
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  await cleanup();
});

async function readRuntime(): Promise<{ pid: number; port: number } | undefined> {
  return readFile(join(home, "runtime.json"), "utf8")
    .then((t) => JSON.parse(t) as { pid: number; port: number })
    .catch(() => undefined);
}

/** `svc logs --follow --json -n 1` as a child, with what it printed so far. */
function follower(): { out: () => string; child: ChildProcess } {
  const child = spawn(process.execPath, [CLI_PATH, "logs", "--follow", "--json", "-n", "1"], {
    env: childEnv(home),
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  return { out: () => out, child };
}

/** A port no one listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("svc start, logs, stop", () => {
  it("start detaches a daemon; status sees it; logs shows its start; logs -f sees its stop; stop waits until it is gone", async () => {
    const started = await runCli(["start", "--port", "0"], { home, timeoutMs: 90_000 });
    expect(started.code, started.stderr).toBe(0);
    const info = (await readRuntime())!;
    expect(started.stdout.trim()).toBe(
      `svc daemon started, pid ${info.pid}, http://127.0.0.1:${info.port} (logs: ${daemonLogPath(home)})`,
    );
    // The CLI that started it has exited; the daemon runs on in its own process group.
    expect(processRunning(info.pid)).toBe(true);
    const status = await runCli(["status", "--json"], { home });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, pid: info.pid, answering: true });

    expect((await stat(daemonLogPath(home))).mode & 0o777).toBe(0o600);
    const logs = await runCli(["logs"], { home });
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toMatch(
      new RegExp(`INFO {2}daemon listening bind=127\\.0\\.0\\.1 port=${info.port} pid=${info.pid}`),
    );

    const f = follower();
    // It has read the file (its last line printed) and follows from there: the daemon's stop is
    // the new line to wait for.
    await until(() => (f.out().includes("\n") ? true : undefined), "the follower to print the last line", 30_000);
    const again = await runCli(["serve", "--detach", "--port", "0"], { home });
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`svc daemon already running, pid ${info.pid}`);

    const stopped = await runCli(["stop"], { home, timeoutMs: 60_000 });
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stdout.trim()).toBe(`svc daemon stopped (pid ${info.pid})`);
    expect(processRunning(info.pid)).toBe(false);
    await expect(stat(join(home, "runtime.json"))).rejects.toMatchObject({ code: "ENOENT" });
    await until(
      () => (f.out().includes('"msg":"daemon stopped"') ? true : undefined),
      "logs -f to show the stop",
      30_000,
    );

    const status2 = await runCli(["status"], { home });
    expect(status2.code).toBe(3);
    const stop2 = await runCli(["stop", "--json"], { home });
    expect(stop2.code).toBe(3);
    expect(JSON.parse(stop2.stdout)).toEqual({ stopped: false, running: false, home });
  });

  it("a start that fails says why, from the log, and exits 1", async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", r));
    try {
      const port = (busy.address() as { port: number }).port;
      const r = await runCli(["start", "--port", String(port)], { home, timeoutMs: 90_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`the daemon did not start (exit code 1); its log (${daemonLogPath(home)}) says:`);
      expect(r.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    } finally {
      busy.close();
    }
  });

  it("stop of a runtime.json whose daemon is gone: not running (exit 3), the stale file removed", async () => {
    const dead = spawn(process.execPath, ["-e", "0"]);
    await new Promise((r) => dead.on("exit", r));
    const info = { pid: dead.pid, port: 1, bind: "127.0.0.1", token: "t", startedAt: 0, version: "0" };
    await writeFile(join(home, "runtime.json"), JSON.stringify(info), { mode: 0o600 });
    const r = await runCli(["stop"], { home });
    expect(r.code).toBe(3);
    expect(r.stdout).toContain(`removed the runtime.json left by pid ${dead.pid}, which is gone`);
    await expect(stat(join(home, "runtime.json"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("stop of a daemon that ignores SIGTERM: exit 1 naming --force after the timeout; --force kills it", async () => {
    // A wedged daemon: its command line says `serve`, its port answers nothing, it ignores SIGTERM.
    const wedged = spawn(
      process.execPath,
      [
        "-e",
        "process.on('SIGTERM', () => console.log('ignored')); console.log('ready'); setInterval(() => {}, 1e3)",
        "serve",
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    children.push(wedged);
    let out = "";
    wedged.stdout!.on("data", (d) => (out += d));
    await until(() => (out.includes("ready") ? true : undefined), "the wedged process to start");
    const info = {
      pid: wedged.pid,
      port: await closedPort(),
      bind: "127.0.0.1",
      token: "t",
      startedAt: 0,
      version: "0",
    };
    await writeFile(join(home, "runtime.json"), JSON.stringify(info), { mode: 0o600 });
    const r = await runCli(["stop", "--timeout", "0.2"], { home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`the daemon (pid ${wedged.pid}) is still running 0.2 s after SIGTERM`);
    expect(r.stderr).toContain("svc stop --force");
    await until(() => (out.includes("ignored") ? true : undefined), "the SIGTERM to arrive");
    expect(wedged.exitCode).toBeNull();
    const exited = new Promise((res) => wedged.on("exit", (_c, sig) => res(sig)));
    const forced = await runCli(["stop", "--timeout", "0.2", "--force", "--json"], { home });
    expect(forced.code, forced.stderr).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ stopped: true, pid: wedged.pid, forced: true });
    expect(await exited).toBe("SIGKILL");
    await expect(stat(join(home, "runtime.json"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("svc serve in the foreground writes the log file too, and keeps JSON lines on a stderr that is not a terminal", async () => {
    const d = await startDaemonProcess({ home });
    children.push(d.child);
    const line = await until(
      async () =>
        (await readFile(daemonLogPath(home), "utf8").catch(() => ""))
          .split("\n")
          .find((l) => l.includes('"msg":"daemon listening"')),
      "the start line in daemon.log",
      30_000,
    );
    expect(JSON.parse(line)).toMatchObject({ level: "info", pid: d.child.pid, port: d.port });
    expect(d.logs()).toContain(line);
    expect(await d.stop()).toBe(0);
    expect(await readFile(daemonLogPath(home), "utf8")).toContain('"msg":"daemon stopped"');
  });

  // util-linux `script` gives the daemon a terminal for its stdout and stderr.
  const hasScript = spawnSync("script", ["--version"]).status === 0;
  it.skipIf(!hasScript)(
    "svc serve on a terminal prints readable lines (the file stays JSON); svc stop stops it",
    async () => {
      const cmd = `exec "${process.execPath}" "${CLI_PATH}" serve --port 0`;
      const tty = spawn("script", ["-qefc", cmd, "/dev/null"], {
        env: childEnv(home),
        stdio: ["pipe", "pipe", "pipe"],
      });
      children.push(tty);
      let out = "";
      tty.stdout!.on("data", (d) => (out += d));
      const exited = new Promise((r) => tty.on("exit", r));
      await until(() => (out.includes("svc daemon listening") ? true : undefined), "the daemon on a terminal", 60_000);
      const info = (await readRuntime())!;
      expect(out).toMatch(
        new RegExp(`\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z INFO {2}daemon listening bind=127\\.0\\.0\\.1 port=${info.port}`),
      );
      expect(out).not.toContain('"msg":"daemon listening"');
      const stopped = await runCli(["stop"], { home, timeoutMs: 60_000 });
      expect(stopped.code, stopped.stderr).toBe(0);
      await exited;
      const file = await readFile(daemonLogPath(home), "utf8");
      expect(file).toContain('"msg":"daemon listening"');
      expect(file).toContain('"msg":"daemon stopped"');
    },
  );
});
