import { readFile, readdir, stat, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DeferredLogFile, RotatingLogFile, daemonLogPath, logsDir } from "../../../core/runtime/log-file.js";
import { formatLogLine, parseLogLine } from "../../../core/runtime/log-format.js";
import { makeTempHome } from "../../support/cli.js";

let home: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ home, cleanup } = await makeTempHome("svc-logfile-")));
afterEach(() => cleanup());

const line = (i: number) => JSON.stringify({ t: new Date(0).toISOString(), level: "info", msg: "entry", i });

/** Every line of daemon.log.<files> … daemon.log.1, daemon.log, oldest first. */
async function allLines(files: number): Promise<string[]> {
  const out: string[] = [];
  for (let n = files; n >= 1; n--)
    out.push(...(await readFile(`${daemonLogPath(home)}.${n}`, "utf8").catch(() => "")).split("\n").filter(Boolean));
  out.push(...(await readFile(daemonLogPath(home), "utf8")).split("\n").filter(Boolean));
  return out;
}

describe("the daemon's log file", () => {
  it("is created 0600 in a 0700 logs folder", async () => {
    const f = new RotatingLogFile(home);
    f.write(line(0));
    f.close();
    expect((await stat(logsDir(home))).mode & 0o777).toBe(0o700);
    expect((await stat(daemonLogPath(home))).mode & 0o777).toBe(0o600);
    expect(await readFile(daemonLogPath(home), "utf8")).toBe(line(0) + "\n");
  });

  it("rotates by size: no line lost or split, no file over the limit, the oldest dropped beyond `files`", async () => {
    const maxBytes = 1024;
    const f = new RotatingLogFile(home, () => ({ maxBytes, files: 3 }));
    const perFile = Math.floor(maxBytes / (line(100).length + 1));
    // Exactly enough to fill daemon.log.3 … daemon.log: nothing dropped yet.
    const fits = perFile * 4;
    for (let i = 0; i < fits; i++) f.write(line(i));
    expect(await allLines(3)).toEqual(Array.from({ length: fits }, (_, i) => line(i)));
    for (const name of await readdir(logsDir(home)))
      expect((await stat(join(logsDir(home), name))).size).toBeLessThanOrEqual(maxBytes);
    // One file more: the oldest file's lines go, the rest stay contiguous.
    for (let i = fits; i < fits + perFile; i++) f.write(line(i));
    f.close();
    expect(await allLines(3)).toEqual(Array.from({ length: fits }, (_, i) => line(i + perFile)));
  });

  it("touches no file but daemon.log and daemon.log.1 … daemon.log.<files>", async () => {
    await mkdir(logsDir(home), { recursive: true });
    const foreign = { "notes.txt": "mine", "daemon.log.bak": "mine too", "daemon.log.7": "beyond files" };
    for (const [n, text] of Object.entries(foreign)) await writeFile(join(logsDir(home), n), text);
    const f = new RotatingLogFile(home, () => ({ maxBytes: 200, files: 2 }));
    for (let i = 0; i < 50; i++) f.write(line(i));
    f.close();
    for (const [n, text] of Object.entries(foreign)) expect(await readFile(join(logsDir(home), n), "utf8")).toBe(text);
    expect((await readdir(logsDir(home))).sort()).toEqual(
      ["daemon.log", "daemon.log.1", "daemon.log.2", ...Object.keys(foreign)].sort(),
    );
  });

  it("a rotation that cannot rename (a folder named daemon.log.1) loses no line: the file grows on", async () => {
    await mkdir(join(logsDir(home), "daemon.log.1", "inside"), { recursive: true });
    const f = new RotatingLogFile(home, () => ({ maxBytes: 200, files: 1 }));
    const said: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((s: string) => (said.push(s), true)) as typeof process.stderr.write;
    try {
      for (let i = 0; i < 20; i++) f.write(line(i));
    } finally {
      process.stderr.write = write;
      f.close();
    }
    expect((await readFile(daemonLogPath(home), "utf8")).split("\n").filter(Boolean)).toEqual(
      Array.from({ length: 20 }, (_, i) => line(i)),
    );
    expect(await readdir(join(logsDir(home), "daemon.log.1"))).toEqual(["inside"]);
    expect(said).toEqual([expect.stringContaining(`cannot rotate ${daemonLogPath(home)}`)]);
  });

  it("a foreground daemon's lines are held until it has started, then written in order", async () => {
    const file = new RotatingLogFile(home);
    const deferred = new DeferredLogFile(file);
    deferred.write(line(1));
    await expect(stat(logsDir(home))).rejects.toMatchObject({ code: "ENOENT" });
    deferred.attach();
    deferred.write(line(2));
    file.close();
    expect(await readFile(daemonLogPath(home), "utf8")).toBe(`${line(1)}\n${line(2)}\n`);
  });
});

describe("the readable form of a log line", () => {
  it("shows time, level, message and key=value, quoting values with spaces", () => {
    const l = JSON.stringify({
      t: "2026-11-27T01:02:03.456Z",
      level: "warn",
      msg: "request failed",
      path: "/x y",
      code: 503,
      ok: false,
    });
    expect(formatLogLine(l)).toBe('2026-11-27 01:02:03.456Z WARN  request failed path="/x y" code=503 ok=false');
    expect(formatLogLine(l, { color: true })).toContain("\u001b[33mWARN \u001b[0m");
  });

  it("shows a line that is not a log entry as it is", () => {
    for (const raw of ['{"t":"2026-11-27T01:02:03.456Z","lev', "    at Object.<anonymous> (x.js:1:1)", "[1,2]", "{}"]) {
      expect(parseLogLine(raw)).toBeUndefined();
      expect(formatLogLine(raw)).toBe(raw);
    }
  });
});
