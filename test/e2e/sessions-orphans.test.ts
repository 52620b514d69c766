import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readProcStatSync } from "../../core/sessions/process-mark.js";
import { useDaemonProcess } from "../support/cli.js";
import { FIXTURES } from "../support/paths.js";
import { FIXTURE_AGENTS, until } from "../core/sessions/harness.js";

// A daemon killed -9 leaves its sessions' processes running and their transcripts unended; the
// next daemon on the same home stops those processes and ends the transcripts. Linux only: the
// processes are recognised through /proc.

const RECORDER = join(FIXTURES, "scripts", "signal-recorder.mjs");

interface Line {
  seq: number;
  type: string;
  data?: any;
}

const fx = useDaemonProcess({
  prefix: "svc-e2e-orphans-",
  config: {
    acpAgents: { hang: FIXTURE_AGENTS.hang },
    terminalPresets: { stubborn: { argv: [process.execPath, RECORDER], env: { IGNORE_SIGTERM: "1", WITH_CHILD: "1" } } },
  },
  env: { SVC_TERMINAL_NO_PTY: "1" },
});

/** Every pid a test started, killed at the end whatever happened. */
const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL");
      } catch {
        /* gone */
      }
    }
  }
});

/** Running: the process exists and is not a zombie (orphans may wait a while to be reaped). */
function running(pid: number): boolean {
  const s = readProcStatSync(pid);
  return Boolean(s && s.state !== "Z" && s.state !== "X");
}

async function lines(path: string): Promise<Line[]> {
  const text = await readFile(path, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Line);
}

async function post(path: string, payload: unknown): Promise<Record<string, any>> {
  const res = await fx.daemon.fetch(path, { method: "POST", body: JSON.stringify(payload), headers: { "content-type": "application/json" } });
  const body = (await res.json()) as Record<string, any>;
  expect(res.ok, JSON.stringify(body)).toBe(true);
  return body;
}

/** Starts a session and waits until its `session.started` line (and `extra` type, if any) is on disk. */
async function startSession(route: string, payload: unknown, extra?: string): Promise<{ id: string; pid: number; eventsPath: string; terminalPath?: string }> {
  const { descriptor } = await post(route, payload);
  started.push(descriptor.pid);
  await until(async () => {
    const types = (await lines(descriptor.eventsPath)).map((l) => l.type);
    return types.includes("session.started") && (!extra || types.includes(extra));
  }, `${descriptor.id} on disk`);
  return descriptor;
}

describe.runIf(existsSync("/proc/self/stat"))("sessions left running by a daemon killed with -9", () => {
  let survivor: { id: string; pid: number; eventsPath: string };

  it("the next daemon stops their processes (escalating to SIGKILL) and ends their transcripts with error daemon_exited", async () => {
    const sleeper = await startSession("/sessions/terminal", { argv: ["sleep", "600"], cwd: fx.home });
    const stubborn = await startSession("/sessions/terminal", { preset: "stubborn", cwd: fx.home });
    // An ACP agent in the middle of a turn that never ends: stdin EOF alone does not end it.
    const agent = await startSession("/sessions", { adapter: "hang", cwd: fx.home, prompt: "wait forever" }, "prompt");
    await until(async () => /child \d+/.test(await readFile(stubborn.terminalPath!, "utf8").catch(() => "")), "the stubborn command's child");
    const grandchild = Number(/child (\d+)/.exec(await readFile(stubborn.terminalPath!, "utf8"))![1]);
    started.push(grandchild);

    await fx.daemon.kill9();
    await new Promise((r) => setTimeout(r, 300));
    for (const pid of [sleeper.pid, stubborn.pid, grandchild, agent.pid]) expect(running(pid), `pid ${pid} after the daemon died`).toBe(true);
    for (const s of [sleeper, stubborn, agent]) expect((await lines(s.eventsPath)).map((l) => l.type)).not.toContain("session.ended");

    const daemon = await fx.start();
    // A session of the new daemon life, started while the sweep may still run: never touched.
    survivor = await startSession("/sessions/terminal", { argv: ["sleep", "600"], cwd: fx.home });
    await until(async () => (await Promise.all([sleeper, stubborn, agent].map(async (s) => (await lines(s.eventsPath)).at(-1)?.type))).every((t) => t === "session.ended"), "the ended lines", 20_000);

    for (const pid of [sleeper.pid, stubborn.pid, grandchild, agent.pid]) expect(running(pid), `pid ${pid} after the sweep`).toBe(false);
    const last = async (s: { eventsPath: string }) => (await lines(s.eventsPath)).at(-1)!;
    expect((await last(sleeper)).data).toEqual({ code: null, signal: "SIGTERM", error: "daemon_exited" });
    expect((await last(stubborn)).data).toEqual({ code: null, signal: "SIGKILL", error: "daemon_exited" });
    expect((await last(agent)).data).toEqual({ code: null, signal: "SIGTERM", error: "daemon_exited" });
    // The seq goes on from the transcript's last line.
    const seqs = (await lines(sleeper.eventsPath)).map((l) => l.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));

    const exported = (await (await daemon.fetch(`/sessions/${agent.id}/export`)).json()) as { events: Line[] };
    expect(exported.events.at(-1)).toMatchObject({ type: "session.ended", data: { error: "daemon_exited" } });
    expect(daemon.logs()).toMatch(/"msg":"ended sessions left running by an earlier daemon","count":3,"terminated":3/);

    expect(running(survivor.pid)).toBe(true);
    expect((await lines(survivor.eventsPath)).map((l) => l.type)).not.toContain("session.ended");
    const listed = (await (await daemon.fetch("/sessions")).json()) as { sessions: Array<{ id: string; state: string }> };
    expect(listed.sessions.find((s) => s.id === survivor.id)?.state).toBe("idle");
  });

  it("a clean stop (SIGTERM to the daemon) still stops its sessions itself, and the next daemon leaves their transcripts alone", async () => {
    const before = (await lines(survivor.eventsPath)).length;
    expect(await fx.daemon.stop()).toBe(0);
    expect(running(survivor.pid)).toBe(false);
    const ended = await lines(survivor.eventsPath);
    expect(ended.at(-1)).toMatchObject({ type: "session.ended", data: { error: "stopped" } });
    expect(ended.length).toBeGreaterThan(before);
    const text = await readFile(survivor.eventsPath, "utf8");
    const daemon = await fx.start();
    const probe = await startSession("/sessions/terminal", { argv: ["sleep", "600"], cwd: fx.home });
    await new Promise((r) => setTimeout(r, 500));
    expect(await readFile(survivor.eventsPath, "utf8")).toBe(text);
    expect(daemon.logs()).not.toContain("earlier daemon");
    await post(`/sessions/${probe.id}/stop`, {});
  });
});
