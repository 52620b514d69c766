/** `svc logs` against the built CLI, over log files written by the daemon's own writer. */
import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RotatingLogFile, daemonLogPath, logsDir } from "../../../core/runtime/log-file.js";
import { childEnv, makeTempHome, runCli } from "../../support/cli.js";
import { CLI_PATH } from "../../support/paths.js";
import { until } from "../../support/until.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-logs-")));
afterEach(() => cleanup());

const HOUR = 3_600_000;
const entry = (msAgo: number, level: string, msg: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({ t: new Date(Date.now() - msAgo).toISOString(), level, msg, ...fields });

/** daemon.log.2 (3 h ago), daemon.log.1 (2 h ago), daemon.log (now, with a torn last line). */
async function writeLogs(): Promise<void> {
  await mkdir(logsDir(home), { recursive: true });
  const path = daemonLogPath(home);
  await writeFile(
    `${path}.2`,
    [entry(3 * HOUR, "info", "oldest"), entry(3 * HOUR, "error", "old failure")].join("\n") + "\n",
  );
  await writeFile(
    `${path}.1`,
    [entry(2 * HOUR, "warn", "middle warning"), "    at stack (frame.js:1:1)"].join("\n") + "\n",
  );
  await writeFile(
    path,
    [entry(60_000, "debug", "recent debug"), entry(30_000, "info", "recent info", { port: 1, why: "a b" })].join("\n") +
      '\n{"t":"2026-11-27T0',
  );
}

const msgs = (stdout: string) => stdout.trim().split("\n");

describe("svc logs", () => {
  it("says clearly that there is no log yet", async () => {
    const r = await runCli(["logs"], { home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`no daemon log at ${daemonLogPath(home)} yet`);
  });

  it("prints the readable form; a torn line as it is; --json the lines verbatim", async () => {
    await writeLogs();
    const r = await runCli(["logs", "-n", "2"], { home });
    expect(r.code, r.stderr).toBe(0);
    const [info, torn] = msgs(r.stdout);
    expect(info).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z INFO {2}recent info port=1 why="a b"$/);
    expect(torn).toBe('{"t":"2026-11-27T0');
    // A line that is not an entry is shown whatever --level says (it may be a crash's stack).
    const j = await runCli(["logs", "-n", "2", "--json", "--level", "info"], { home });
    expect(JSON.parse(msgs(j.stdout)[0]!)).toMatchObject({ level: "info", msg: "recent info", port: 1 });
    expect(msgs(j.stdout)[1]).toBe('{"t":"2026-11-27T0');
  });

  it("reaches back into the rotated files for -n, oldest first", async () => {
    await writeLogs();
    const r = await runCli(["logs", "-n", "5", "--json"], { home });
    expect(r.code, r.stderr).toBe(0);
    expect(msgs(r.stdout)).toEqual([
      expect.stringContaining("middle warning"),
      "    at stack (frame.js:1:1)",
      expect.stringContaining("recent debug"),
      expect.stringContaining("recent info"),
      '{"t":"2026-11-27T0',
    ]);
  });

  it("--level keeps that level and above; --since a duration or an ISO time, across files", async () => {
    await writeLogs();
    const errors = await runCli(["logs", "--level", "error", "--since", "4h", "--json"], { home });
    expect(msgs(errors.stdout).filter((l) => l.startsWith("{") && l.endsWith("}"))).toEqual([
      expect.stringContaining("old failure"),
    ]);
    const recent = await runCli(["logs", "--since", "150m", "--level", "warn"], { home });
    expect(recent.stdout).toContain("middle warning");
    expect(recent.stdout).toContain("at stack"); // a raw line goes with the entry before it
    expect(recent.stdout).not.toContain("old failure");
    expect(recent.stdout).not.toContain("recent info");
    const iso = new Date(Date.now() - 90 * 60_000).toISOString();
    const since = await runCli(["logs", "--since", iso], { home });
    expect(since.stdout).not.toContain("middle warning");
    expect(since.stdout).toContain("recent debug");
  });

  it("--since reads the one duration grammar (1w, 1d, 2.5 hours) and epoch ms, refused before", async () => {
    await writeLogs();
    for (const since of ["1w", "1d", String(Date.now() - 4 * HOUR)]) {
      const all = await runCli(["logs", "--since", since], { home });
      expect(all.code, since).toBe(0);
      expect(all.stdout).toContain("oldest");
      expect(all.stdout).toContain("recent info");
    }
    const long = await runCli(["logs", "--since", "2.5 hours"], { home });
    expect(long.stdout).toContain("middle warning");
    expect(long.stdout).not.toContain("old failure");
  });

  it.each([
    [["--level", "loud"], /--level "loud" is not a level; give one of debug, info, warn, error/],
    [["--since", "yesterday"], /--since "yesterday" is invalid: neither a duration nor an ISO-8601 time; allowed: /],
    [["--since", "1M"], /--since "1M" is invalid: M could mean minutes or months/],
    [["-n", "ten"], /--lines "ten" is not a number of lines/],
  ])("refuses %j as a usage error", async (args, message) => {
    await writeLogs();
    const r = await runCli(["logs", ...args], { home });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("--follow prints new lines as they are written, across rotations, none lost", async () => {
    const file = new RotatingLogFile(home, () => ({ maxBytes: 1024, files: 2 }));
    file.write(entry(0, "info", "before follow"));
    const child = spawn(process.execPath, [CLI_PATH, "logs", "--follow", "--json", "-n", "0"], {
      env: childEnv(home),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const exited = new Promise((r) => child.on("exit", r));
    try {
      // Once it follows, each line written shows up; the writer rotates every dozen lines or so.
      const marker = entry(0, "info", "marker");
      await until(() => {
        file.write(marker);
        return out.includes('"marker"') || undefined;
      }, "the follower to start");
      const n = 60;
      for (let i = 0; i < n; i++) {
        file.write(entry(0, "info", "followed", { i }));
        // Let it see some rotations one at a time, and some while it is not looking.
        if (i % 7 === 0) await until(() => out.includes(`"i":${i}}`) || undefined, `line ${i}`);
      }
      await until(() => out.includes(`"i":${n - 1}}`) || undefined, "the last line");
      const seen = out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as { msg: string; i?: number })
        .filter((e) => e.msg === "followed")
        .map((e) => e.i);
      expect(seen).toEqual(Array.from({ length: n }, (_, i) => i));
      expect(out).not.toContain("before follow");
    } finally {
      file.close();
      child.kill("SIGTERM");
      await exited;
    }
  });
});
