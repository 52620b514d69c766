import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { DAEMON_EXITED, endOrphanedSessions, type OrphanSweepOptions } from "../../../core/sessions/orphans.js";
import {
  bootId,
  markDaemon,
  markProcess,
  parseProcStat,
  pidReused,
  readProcStatSync,
  type DaemonMark,
  type ProcessMark,
} from "../../../core/sessions/process-mark.js";
import { readTranscript } from "../../../core/sessions/transcript-reader.js";
import { makeTempHome } from "../../support/cli.js";
import { FIXTURES } from "../../support/paths.js";
import { makeHarness, until } from "./harness.js";

const RECORDER = join(FIXTURES, "scripts", "signal-recorder.mjs");
const HAS_PROC = Boolean(bootId());

let home: { home: string; cleanup(): Promise<void> };
let children: ChildProcess[] = [];
beforeEach(async () => {
  home = await makeTempHome("svc-orphans-");
});
afterEach(async () => {
  for (const c of children) {
    try {
      process.kill(-c.pid!, "SIGKILL");
    } catch {
      c.kill("SIGKILL");
    }
  }
  children = [];
  await home.cleanup();
});

/** A signal-recorder process (its own group when `detached`), with its output collected, once it is ready. */
async function recorder(opts: { detached?: boolean; ignoreTerm?: boolean; withChild?: boolean } = {}) {
  const child = spawn(process.execPath, [RECORDER], {
    detached: opts.detached ?? false,
    stdio: ["ignore", "pipe", "ignore"],
    env: { ...process.env, IGNORE_SIGTERM: opts.ignoreTerm ? "1" : "0", WITH_CHILD: opts.withChild ? "1" : "0" },
  });
  children.push(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  await until(() => out.includes("ready"), "the recorder to start");
  const grandchild = /child (\d+)/.exec(out)?.[1];
  return { child, pid: child.pid!, output: () => out, grandchild: grandchild ? Number(grandchild) : undefined };
}

/** Running: the process exists and is not a zombie (nothing may reap orphans promptly here). */
function running(pid: number): boolean {
  const s = readProcStatSync(pid);
  return Boolean(s && s.state !== "Z" && s.state !== "X");
}

const DEAD_DAEMON: DaemonMark = { pid: 2 ** 22 + 7, startTime: 1, bootId: "gone" };

/** Writes a transcript of an earlier daemon life: starting, started (with these marks), a prompt, and `extra` raw text. */
async function transcript(
  id: string,
  started: { pid?: number; process?: ProcessMark; daemon?: DaemonMark },
  extra: string[] = [],
): Promise<string> {
  const dir = join(home.home, "sessions", id);
  await mkdir(dir, { recursive: true });
  const path = join(dir, "events.jsonl");
  const lines = [
    { seq: 1, at: 1, type: "session.starting", data: { adapter: "terminal" } },
    { seq: 2, at: 2, type: "session.started", data: { info: { transport: "pipe" }, ...started } },
    { seq: 3, at: 3, type: "input", data: { bytes: 3 } },
  ].map((l) => JSON.stringify(l) + "\n");
  await writeFile(path, lines.join("") + extra.join(""));
  return path;
}

/**
 * A grace no busy machine outlasts: a process that exits at SIGTERM ends the wait at once, so
 * only the escalation test, whose recorder ignores SIGTERM, sets a short one.
 */
function sweep(extra: Partial<OrphanSweepOptions> = {}) {
  const logger = createMemoryLogger();
  const run = endOrphanedSessions({
    eventsDir: join(home.home, "sessions"),
    isKnown: () => false,
    now: () => 42,
    graceMs: 60_000,
    logger,
    ...extra,
  });
  return { run, logger };
}

describe("parseProcStat", () => {
  it("counts fields from the command name's last parenthesis (names may hold spaces and parentheses)", () => {
    const fields = Array.from({ length: 50 }, (_, i) => String(i + 3));
    fields[0] = "S";
    fields[19] = "987654";
    expect(parseProcStat(`1234 (a) b (c) ${fields.join(" ")}\n`)).toEqual({
      state: "S",
      ppid: 4,
      pgrp: 5,
      startTime: 987654,
    });
    expect(parseProcStat("garbage")).toBeUndefined();
  });
});

describe.runIf(HAS_PROC)("process marks", () => {
  it("marks a child of this process, with whether it leads its own group; not a process that is not our child", async () => {
    const plain = await recorder();
    const detached = await recorder({ detached: true });
    expect(markProcess(plain.pid)).toEqual({
      startTime: readProcStatSync(plain.pid)!.startTime,
      bootId: bootId(),
      group: false,
    });
    expect(markProcess(detached.pid)).toMatchObject({ group: true });
    expect(markProcess(process.ppid)).toBeUndefined();
    expect(markProcess(undefined)).toBeUndefined();
    expect(markDaemon()).toEqual({
      pid: process.pid,
      startTime: readProcStatSync(process.pid)!.startTime,
      bootId: bootId(),
    });
  });

  it("tells a reused pid (running, another start time or boot) from the marked process and from a pid that is gone", async () => {
    const { child, pid } = await recorder();
    const mark = markProcess(pid)!;
    expect(pidReused(pid, mark)).toBe(false);
    expect(pidReused(pid, { ...mark, startTime: mark.startTime + 1 })).toBe(true);
    expect(pidReused(pid, { ...mark, bootId: "another-boot" })).toBe(true);
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
    expect(pidReused(pid, { ...mark, startTime: mark.startTime + 1 })).toBe(false);
  });
});

describe.runIf(HAS_PROC)("endOrphanedSessions", () => {
  it("never signals a pid whose start time or boot does not match the mark (a reused pid), and still ends the transcript", async () => {
    const decoy = await recorder({ detached: true });
    const real = markProcess(decoy.pid)!;
    const a = await transcript("ses_WRONGSTART", {
      pid: decoy.pid,
      process: { ...real, startTime: real.startTime - 1 },
      daemon: DEAD_DAEMON,
    });
    const b = await transcript("ses_WRONGBOOT", {
      pid: decoy.pid,
      process: { ...real, bootId: "00000000-0000-0000-0000-000000000000" },
      daemon: DEAD_DAEMON,
    });
    const c = await transcript("ses_NOMARK", { pid: decoy.pid, daemon: DEAD_DAEMON });
    const { run } = sweep();
    expect(await run).toEqual({ ended: 3, terminated: 0 });
    await new Promise((r) => setTimeout(r, 200));
    expect(running(decoy.pid)).toBe(true);
    expect(decoy.output()).not.toContain("got");
    for (const path of [a, b, c]) {
      expect((await readTranscript(path)).at(-1)).toEqual({
        seq: 4,
        at: 42,
        type: "session.ended",
        data: { code: null, signal: null, error: DAEMON_EXITED },
      });
    }
  });

  it("never signals pid 1 (kill(-1) is every process), this daemon or its own process group, even with marks copied from /proc", async () => {
    const realKill = process.kill.bind(process);
    const sent: Array<[number, unknown]> = [];
    // Only probes (signal 0) reach the kernel: a regression here must not signal anything for real.
    const spy = vi.spyOn(process, "kill").mockImplementation((pid: number, signal?: string | number) => {
      if (signal === 0) return realKill(pid, 0);
      sent.push([pid, signal]);
      return true;
    });
    try {
      const copied = (pid: number, group: boolean): ProcessMark => ({
        startTime: readProcStatSync(pid)!.startTime,
        bootId: bootId()!,
        group,
      });
      if (readProcStatSync(1)) await transcript("ses_INIT", { pid: 1, process: copied(1, true), daemon: DEAD_DAEMON });
      await transcript("ses_SELF", { pid: process.pid, process: copied(process.pid, false), daemon: DEAD_DAEMON });
      await transcript("ses_SELFGROUP", { pid: process.pid, process: copied(process.pid, true), daemon: DEAD_DAEMON });
      const pgrp = readProcStatSync(process.pid)!.pgrp;
      const leader = readProcStatSync(pgrp);
      if (pgrp > 1 && leader && leader.state !== "Z")
        await transcript("ses_OWNGROUP", { pid: pgrp, process: copied(pgrp, true), daemon: DEAD_DAEMON });
      expect(await sweep().run).toMatchObject({ terminated: 0 });
      expect(sent).toEqual([]);
    } finally {
      spy.mockRestore();
    }
  });

  it("terminates a marked process group (its background child too) with SIGTERM and records the signal", async () => {
    const p = await recorder({ detached: true, withChild: true });
    expect(running(p.grandchild!)).toBe(true);
    const path = await transcript("ses_GROUP", { pid: p.pid, process: markProcess(p.pid)!, daemon: DEAD_DAEMON });
    const { run, logger } = sweep();
    expect(await run).toEqual({ ended: 1, terminated: 1 });
    expect(p.output()).toContain("got SIGTERM");
    expect(running(p.pid)).toBe(false);
    expect(running(p.grandchild!)).toBe(false);
    expect((await readTranscript(path)).at(-1)).toMatchObject({
      type: "session.ended",
      data: { code: null, signal: "SIGTERM", error: DAEMON_EXITED },
    });
    expect(logger.lines.filter((l) => l.includes("earlier daemon"))).toEqual([
      expect.stringMatching(/"level":"info".*"count":1,"terminated":1/),
    ]);
  });

  it("escalates to SIGKILL after the grace for a process that ignores SIGTERM; a plain (non-group) process is signalled alone", async () => {
    const p = await recorder({ ignoreTerm: true, withChild: true });
    const mark = markProcess(p.pid)!;
    expect(mark.group).toBe(false);
    const path = await transcript("ses_STUBBORN", { pid: p.pid, process: mark, daemon: DEAD_DAEMON });
    const started = Date.now();
    // Long enough for a loaded machine to run the recorder's SIGTERM handler before the SIGKILL.
    expect(await sweep({ graceMs: 1_000 }).run).toEqual({ ended: 1, terminated: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    expect(p.output()).toContain("got SIGTERM");
    expect(running(p.pid)).toBe(false);
    // Its own group is this test's: only the marked process was signalled, not its child.
    expect(running(p.grandchild!)).toBe(true);
    process.kill(p.grandchild!, "SIGKILL");
    expect((await readTranscript(path)).at(-1)).toMatchObject({ data: { signal: "SIGKILL", error: DAEMON_EXITED } });
  });

  it("reads a resumed session's latest life: an end before `session.resumed` is not its end, and its new process is the one stopped", async () => {
    const p = await recorder({ detached: true });
    const line = (seq: number, type: string, data: unknown) => JSON.stringify({ seq, at: seq, type, data }) + "\n";
    const earlier = [line(4, "session.ended", { code: null, signal: null, error: DAEMON_EXITED })];
    const resumed = (daemon: DaemonMark) => [
      ...earlier,
      line(5, "session.resumed", { adapter: "keeper", daemon }),
      line(6, "session.started", { pid: p.pid, process: markProcess(p.pid)!, daemon }),
    ];
    // The first life's process is long gone (a pid no process has).
    const path = await transcript("ses_RESUMED", { pid: 2 ** 22 + 9, daemon: DEAD_DAEMON }, resumed(DEAD_DAEMON));
    const liveDaemon = await transcript(
      "ses_RESUMEDHERE",
      { pid: 2 ** 22 + 9, daemon: DEAD_DAEMON },
      resumed(markDaemon()),
    );
    const untouched = await readFile(liveDaemon, "utf8");
    expect(await sweep().run).toEqual({ ended: 1, terminated: 1 });
    expect(running(p.pid)).toBe(false);
    expect((await readTranscript(path)).at(-1)).toEqual({
      seq: 7,
      at: 42,
      type: "session.ended",
      data: { code: null, signal: "SIGTERM", error: DAEMON_EXITED },
    });
    expect(await readFile(liveDaemon, "utf8")).toBe(untouched);
  });

  it("leaves ended transcripts, sessions the runtime knows and sessions of a daemon that still runs alone", async () => {
    const p = await recorder({ detached: true });
    const mark = markProcess(p.pid)!;
    const endedLine = JSON.stringify({ seq: 4, at: 4, type: "session.ended", data: { code: 0, signal: null } }) + "\n";
    // session.ended followed by more lines than the tail read holds: the full read still finds it.
    const late = Array.from(
      { length: 20 },
      (_, i) => JSON.stringify({ seq: 5 + i, at: 5, type: "update", data: { kind: "late" } }) + "\n",
    );
    const ended = await transcript("ses_ENDED", { pid: p.pid, process: mark, daemon: DEAD_DAEMON }, [endedLine]);
    const endedLate = await transcript("ses_ENDEDLATE", { pid: p.pid, process: mark, daemon: DEAD_DAEMON }, [
      endedLine,
      ...late,
    ]);
    const known = await transcript("ses_KNOWN", { pid: p.pid, process: mark, daemon: DEAD_DAEMON });
    const liveDaemon = await transcript("ses_LIVEDAEMON", { pid: p.pid, process: mark, daemon: markDaemon() });
    await mkdir(join(home.home, "sessions", "not a session id"));
    const before = await Promise.all([ended, endedLate, known, liveDaemon].map((f) => readFile(f, "utf8")));
    expect(await sweep({ isKnown: (id) => id === "ses_KNOWN" }).run).toEqual({ ended: 0, terminated: 0 });
    expect(await Promise.all([ended, endedLate, known, liveDaemon].map((f) => readFile(f, "utf8")))).toEqual(before);
    expect(running(p.pid)).toBe(true);
    expect(p.output()).not.toContain("got");
  });

  it("leaves a session still starting (no session.started yet) of a daemon that runs alone: session.starting carries the daemon mark", async () => {
    // Another daemon sharing this eventsDir, between its session.starting line and session.started.
    const h = await makeHarness();
    try {
      const { descriptor } = await h.runtime.start({ adapter: "echo", cwd: h.home });
      await h.runtime.get(descriptor.id).transcript.flushed();
      const starting = (await readTranscript(descriptor.eventsPath)).find((l) => l.type === "session.starting");
      expect(starting?.data).toMatchObject({ daemon: markDaemon() });
    } finally {
      await h.cleanup();
    }
    const dir = join(home.home, "sessions", "ses_STARTING");
    await mkdir(dir, { recursive: true });
    const path = join(dir, "events.jsonl");
    await writeFile(
      path,
      JSON.stringify({ seq: 1, at: 1, type: "session.starting", data: { adapter: "echo", daemon: markDaemon() } }) +
        "\n",
    );
    const before = await readFile(path, "utf8");
    expect(await sweep().run).toEqual({ ended: 0, terminated: 0 });
    expect(await readFile(path, "utf8")).toBe(before);
  });

  it("two daemons sharing eventsDir that sweep at once end a session once", async () => {
    const p = await recorder({ detached: true });
    const path = await transcript("ses_TWICE", { pid: p.pid, process: markProcess(p.pid)!, daemon: DEAD_DAEMON });
    const results = await Promise.all([sweep().run, sweep().run]);
    expect(results.map((r) => r.ended).sort()).toEqual([0, 1]);
    expect(running(p.pid)).toBe(false);
    expect((await readTranscript(path)).filter((l) => l.type === "session.ended")).toEqual([
      { seq: 4, at: 42, type: "session.ended", data: { code: null, signal: "SIGTERM", error: DAEMON_EXITED } },
    ]);
  });

  it("starts the line after a torn last line, with a seq past every seq on disk; a transcript without a session.started line is only ended", async () => {
    const torn = await transcript("ses_TORN", { pid: 1, daemon: DEAD_DAEMON }, ['{"seq":4,"at":4,"type":"upd']);
    const dir = join(home.home, "sessions", "ses_NOSTART");
    await mkdir(dir);
    await writeFile(join(dir, "events.jsonl"), JSON.stringify({ seq: 1, at: 1, type: "session.starting" }) + "\n");
    expect(await sweep().run).toEqual({ ended: 2, terminated: 0 });
    const text = await readFile(torn, "utf8");
    expect(
      text.endsWith(
        '"type":"upd\n' +
          JSON.stringify({
            seq: 5,
            at: 42,
            type: "session.ended",
            data: { code: null, signal: null, error: DAEMON_EXITED },
          }) +
          "\n",
      ),
    ).toBe(true);
    expect((await readTranscript(join(dir, "events.jsonl"))).map((l) => l.type)).toEqual([
      "session.starting",
      "session.ended",
    ]);
  });

  it("has nothing to do without an events directory", async () => {
    expect(
      await endOrphanedSessions({ eventsDir: join(home.home, "missing"), isKnown: () => false, now: () => 0 }),
    ).toEqual({ ended: 0, terminated: 0 });
  });
});
