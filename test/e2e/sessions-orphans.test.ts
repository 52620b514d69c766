import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { processRunning as running } from "../support/process-alive.js";
import { transcriptLines as lines, type Line } from "../support/transcript-lines.js";
import { useDaemonProcess } from "../support/cli.js";
import { FIXTURES } from "../support/paths.js";
import { FIXTURE_AGENTS, until } from "../core/sessions/harness.js";

// A daemon killed -9 leaves its sessions' processes running and their transcripts unended; the
// next daemon on the same home stops those processes and ends the transcripts. Linux only: the
// processes are recognised through /proc.

const RECORDER = join(FIXTURES, "scripts", "signal-recorder.mjs");

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

type Fixture = ReturnType<typeof useDaemonProcess>;

async function post(fx: Fixture, path: string, payload: unknown): Promise<Record<string, any>> {
  const res = await fx.daemon.fetch(path, {
    method: "POST",
    body: JSON.stringify(payload),
    headers: { "content-type": "application/json" },
  });
  const body = (await res.json()) as Record<string, any>;
  expect(res.ok, JSON.stringify(body)).toBe(true);
  return body;
}

/** Starts a session and waits until its `session.started` line (and `extra` type, if any) is on disk. */
async function startSession(
  fx: Fixture,
  route: string,
  payload: unknown,
  extra?: string,
): Promise<{ id: string; pid: number; eventsPath: string; terminalPath?: string }> {
  const { descriptor } = await post(fx, route, payload);
  started.push(descriptor.pid);
  await until(async () => {
    const types = (await lines(descriptor.eventsPath)).map((l) => l.type);
    return types.includes("session.started") && (!extra || types.includes(extra));
  }, `${descriptor.id} on disk`);
  return descriptor;
}

// Two daemons' worth of homes: which signal the sweep records must not depend on how fast a busy
// machine lets it see a process gone. Processes that exit at SIGTERM are swept with a grace no poll
// outlasts (SIGTERM recorded, always); the one that ignores SIGTERM with the default grace (SIGKILL
// recorded, always).
describe.runIf(existsSync("/proc/self/stat"))("sessions left running by a daemon killed with -9", () => {
  const fx = useDaemonProcess({
    prefix: "svc-e2e-orphans-",
    config: { acpAgents: { hang: FIXTURE_AGENTS.hang } },
    env: { SVC_TERMINAL_NO_PTY: "1", SVC_ORPHAN_STOP_GRACE_MS: "100000" },
  });
  let survivor: { id: string; pid: number; eventsPath: string };

  it("the next daemon stops their processes with SIGTERM and ends their transcripts with error daemon_exited", async () => {
    const sleeper = await startSession(fx, "/sessions/terminal", { argv: ["sleep", "600"], cwd: fx.home });
    // An ACP agent in the middle of a turn that never ends: stdin EOF alone does not end it.
    const agent = await startSession(
      fx,
      "/sessions",
      { adapter: "hang", cwd: fx.home, prompt: "wait forever" },
      "prompt",
    );

    await fx.daemon.kill9();
    // (A short look: they keep running without their daemon.)
    await new Promise((r) => setTimeout(r, 300));
    for (const pid of [sleeper.pid, agent.pid]) expect(running(pid), `pid ${pid} after the daemon died`).toBe(true);
    for (const s of [sleeper, agent])
      expect((await lines(s.eventsPath)).map((l) => l.type)).not.toContain("session.ended");

    const daemon = await fx.start();
    // A session of the new daemon life, started while the sweep may still run: never touched.
    survivor = await startSession(fx, "/sessions/terminal", { argv: ["sleep", "600"], cwd: fx.home });
    await until(
      async () =>
        (await Promise.all([sleeper, agent].map(async (s) => (await lines(s.eventsPath)).at(-1)?.type))).every(
          (t) => t === "session.ended",
        ),
      "the ended lines",
    );

    for (const pid of [sleeper.pid, agent.pid]) expect(running(pid), `pid ${pid} after the sweep`).toBe(false);
    const last = async (s: { eventsPath: string }) => (await lines(s.eventsPath)).at(-1)!;
    expect((await last(sleeper)).data).toEqual({ code: null, signal: "SIGTERM", error: "daemon_exited" });
    expect((await last(agent)).data).toEqual({ code: null, signal: "SIGTERM", error: "daemon_exited" });
    // The seq goes on from the transcript's last line.
    const seqs = (await lines(sleeper.eventsPath)).map((l) => l.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));

    const exported = (await (await daemon.fetch(`/sessions/${agent.id}/export`)).json()) as { events: Line[] };
    expect(exported.events.at(-1)).toMatchObject({ type: "session.ended", data: { error: "daemon_exited" } });
    await until(
      () => /"msg":"ended sessions left running by an earlier daemon","count":2,"terminated":2/.test(daemon.logs()),
      "the sweep's log line",
    );

    expect(running(survivor.pid)).toBe(true);
    expect((await lines(survivor.eventsPath)).map((l) => l.type)).not.toContain("session.ended");
    const listed = (await (await daemon.fetch("/sessions")).json()) as {
      sessions: Array<{ id: string; state: string }>;
    };
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
    const probe = await startSession(fx, "/sessions/terminal", { argv: ["sleep", "600"], cwd: fx.home });
    // The sweep runs in the background at start: give it a moment (it finds nothing to end, so
    // there is no line to wait for; a slow machine makes this check weaker, never flaky).
    await new Promise((r) => setTimeout(r, 500));
    expect(await readFile(survivor.eventsPath, "utf8")).toBe(text);
    expect(daemon.logs()).not.toContain("earlier daemon");
    await post(fx, `/sessions/${probe.id}/stop`, {});
  });
});

describe.runIf(existsSync("/proc/self/stat"))("a session left running that ignores SIGTERM", () => {
  const fx = useDaemonProcess({
    prefix: "svc-e2e-orphans-kill-",
    config: {
      terminalPresets: {
        stubborn: { argv: [process.execPath, RECORDER], env: { IGNORE_SIGTERM: "1", WITH_CHILD: "1" } },
      },
    },
    env: { SVC_TERMINAL_NO_PTY: "1" },
  });

  it("the next daemon escalates to SIGKILL after the grace, for its whole process group", async () => {
    const stubborn = await startSession(fx, "/sessions/terminal", { preset: "stubborn", cwd: fx.home });
    await until(
      async () => /child \d+/.test(await readFile(stubborn.terminalPath!, "utf8").catch(() => "")),
      "the stubborn command's child",
    );
    const grandchild = Number(/child (\d+)/.exec(await readFile(stubborn.terminalPath!, "utf8"))![1]);
    started.push(grandchild);

    await fx.daemon.kill9();
    for (const pid of [stubborn.pid, grandchild]) expect(running(pid), `pid ${pid} after the daemon died`).toBe(true);

    const daemon = await fx.start();
    await until(async () => (await lines(stubborn.eventsPath)).at(-1)?.type === "session.ended", "the ended line");
    for (const pid of [stubborn.pid, grandchild]) expect(running(pid), `pid ${pid} after the sweep`).toBe(false);
    expect((await lines(stubborn.eventsPath)).at(-1)!.data).toEqual({
      code: null,
      signal: "SIGKILL",
      error: "daemon_exited",
    });
    await until(
      () => /"msg":"ended sessions left running by an earlier daemon","count":1,"terminated":1/.test(daemon.logs()),
      "the sweep's log line",
    );
  });
});
