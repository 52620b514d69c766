import { readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { findWorkspaceDir, resolvePresetLaunch } from "../../../core/sessions/terminal-launch.js";
import { readTranscript } from "../../../core/sessions/transcript-reader.js";
import { loadPty, type PtyModule } from "../../../plugins/terminal-presets/pty.js";
import { startTerminal } from "../../../plugins/terminal-presets/terminal-session.js";
import { STOP_GRACE_MS } from "../../../core/plugin-api/index.js";
import { makeHarness, until, type Harness } from "../../core/sessions/harness.js";

let h: Harness;
afterEach(async () => {
  vi.unstubAllEnvs();
  await h?.cleanup();
});

describe("terminal sessions (real commands)", () => {
  it("records stdout and stderr in terminal.jsonl and the exit in events.jsonl", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({
      adapter: "terminal",
      cwd: h.home,
      argv: ["bash", "-c", "echo out; echo err >&2; exit 4"],
    });
    expect(descriptor).toMatchObject({
      kind: "terminal",
      source: "terminal",
      terminalPath: join(h.runtime.eventsDir, descriptor.id, "terminal.jsonl"),
    });
    await until(() => h.runtime.state(descriptor.id) === "ended", "exit");
    await h.runtime.get(descriptor.id).closing;
    const out = await readTranscript(descriptor.terminalPath!);
    const text = (s: string) =>
      out
        .filter((l) => (l.data as { stream: string }).stream === s)
        .map((l) => (l.data as { text: string }).text)
        .join("");
    expect([text("stdout"), text("stderr")]).toEqual(["out\n", "err\n"]);
    expect(h.runtime.describe(h.runtime.get(descriptor.id)).exit).toMatchObject({ code: 4 });
    expect((await readTranscript(descriptor.eventsPath)).map((l) => l.type)).toContain("session.ended");
  });

  it("takes input through prompt (stdin) and stops the process on stop", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({
      adapter: "terminal",
      cwd: h.home,
      argv: ["cat"],
      env: { IGNORED: "1" },
    });
    h.runtime.prompt(descriptor.id, "typed line", { sender: { kind: "human" }, urgency: "queue" });
    const s = h.runtime.get(descriptor.id);
    await until(
      async () => (await s.terminal!.flushed(), (await readTranscript(descriptor.terminalPath!)).length > 0),
      "echoed input",
    );
    expect((await readTranscript(descriptor.terminalPath!))[0]!.data).toMatchObject({ text: "typed line\n" });
    const stopped = await h.runtime.stop(descriptor.id);
    expect(stopped).toMatchObject({ state: "ended", exit: { error: "stopped" } });
    expect(() => process.kill(descriptor.pid!, 0)).toThrow();
    h.clock.advance(61_000);
    expect(h.runtime.describe(h.runtime.get(descriptor.id)).activity).toBe("ended");
  });

  it("env is layered over the daemon's environment; a missing command is not_found", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({
      adapter: "terminal",
      cwd: h.home,
      argv: ["bash", "-c", 'echo "$GREETING:${PATH:+has-path}"'],
      env: { GREETING: "hola" },
    });
    await until(() => h.runtime.state(descriptor.id) === "ended", "exit");
    await h.runtime.get(descriptor.id).closing;
    expect(
      (await readTranscript(descriptor.terminalPath!)).map((l) => (l.data as { text: string }).text).join(""),
    ).toBe("hola:has-path\n");
    await expect(
      h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["svc-no-such-command"] }),
    ).rejects.toMatchObject({ code: "not_found" });
  });

  it("uses a plain child process when the pty library is switched off", async () => {
    expect(await loadPty({ SVC_TERMINAL_NO_PTY: "1" })).toBeUndefined();
    vi.stubEnv("SVC_TERMINAL_NO_PTY", "1");
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["true"] });
    expect(descriptor.info?.transport).toBe("pipe");
  });

  it("ends when the command exits although a background child still holds its output open", async () => {
    vi.stubEnv("SVC_TERMINAL_NO_PTY", "1");
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({
      adapter: "terminal",
      cwd: h.home,
      argv: ["bash", "-c", "sleep 600 & echo $!"],
    });
    await until(() => h.runtime.state(descriptor.id) === "ended", "the command's exit");
    await h.runtime.get(descriptor.id).closing;
    const text = (await readTranscript(descriptor.terminalPath!))
      .map((l) => (l.data as { text: string }).text)
      .join("");
    const bg = Number(/^(\d+)\n$/.exec(text)?.[1]);
    try {
      // Ended while the background child (which holds the output open for 10 minutes) still runs.
      expect(alive(bg)).toBe(true);
      expect(h.runtime.describe(h.runtime.get(descriptor.id)).exit).toMatchObject({ code: 0 });
    } finally {
      if (bg > 0) process.kill(bg, "SIGKILL");
    }
  });

  it("stop takes the whole process group, background children included, without waiting for them", async () => {
    vi.stubEnv("SVC_TERMINAL_NO_PTY", "1");
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({
      adapter: "terminal",
      cwd: h.home,
      argv: ["bash", "-c", "sleep 30 & echo $!; sleep 30"],
    });
    const bg = await firstLine(descriptor.id);
    const stopped = await h.runtime.stop(descriptor.id);
    // Ended by the SIGTERM: no wait for the grace and no SIGKILL (whatever the machine's speed).
    expect(stopped).toMatchObject({ state: "ended", exit: { signal: "SIGTERM" } });
    expect(alive(descriptor.pid!)).toBe(false);
    await until(() => !alive(bg), "the background child's end");
  });

  it("stop escalates to SIGKILL for a group that ignores SIGTERM", async () => {
    vi.stubEnv("SVC_TERMINAL_NO_PTY", "1");
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({
      adapter: "terminal",
      cwd: h.home,
      argv: ["bash", "-c", 'trap "" TERM; sleep 30 & echo $!; wait'],
    });
    const bg = await firstLine(descriptor.id);
    const t0 = Date.now();
    const stopped = await h.runtime.stop(descriptor.id);
    // SIGKILL, not before the grace (that it comes right at the grace: the fake-timer pty test below).
    expect(stopped).toMatchObject({ state: "ended", exit: { signal: "SIGKILL" } });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(STOP_GRACE_MS - 50);
    await until(() => !alive(bg) && !alive(descriptor.pid!), "the group's end");
  });

  it("stop of a pty session escalates to SIGKILL after the grace", async () => {
    vi.useFakeTimers();
    try {
      const signals: string[] = [];
      let onExit: (e: { exitCode: number; signal?: number }) => void = () => undefined;
      const pty: PtyModule = {
        spawn: () => ({
          pid: 424242,
          onData: () => undefined,
          onExit: (cb) => void (onExit = cb),
          write: () => undefined,
          kill: (sig) => {
            signals.push(sig!);
            if (sig === "SIGKILL") onExit({ exitCode: 0, signal: 9 });
          },
        }),
      };
      const exits: unknown[] = [];
      const sink = {
        update: () => undefined,
        output: () => undefined,
        quota: () => undefined,
        exited: (i: unknown) => void exits.push(i),
      };
      const handle = await startTerminal(
        { sessionId: "ses_x", adapter: "terminal", cwd: "/", options: {}, skills: [], argv: ["daemonish"] },
        sink,
        pty,
      );
      let stopped = false;
      const stop = handle.stop().then(() => void (stopped = true));
      await vi.advanceTimersByTimeAsync(STOP_GRACE_MS - 1);
      expect(signals).toEqual(["SIGTERM"]);
      expect(stopped).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      await stop;
      expect(signals).toEqual(["SIGTERM", "SIGKILL"]);
      expect(exits).toEqual([{ code: 0, signal: "9" }]);
    } finally {
      vi.useRealTimers();
    }
  });
});

/** The first line the session wrote (a pid the command echoed). */
async function firstLine(id: string): Promise<number> {
  const s = h.runtime.get(id);
  let text = "";
  await until(async () => {
    await s.terminal!.flushed();
    text = (await readTranscript(s.fixed.terminalPath!)).map((l) => (l.data as { text: string }).text).join("");
    return text.includes("\n");
  }, "the first line of output");
  return Number(text.split("\n")[0]);
}

/** True while `pid` runs (a zombie waiting for its reaper counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSyncSafe(`/proc/${pid}/stat`);
  return stat === undefined || !/^\d+ \(.*\) Z/.test(stat);
}

function readFileSyncSafe(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
}

describe("terminal presets", () => {
  const presets = {
    dev: { argv: ["npm", "run", "dev"], env: { PORT: "3000" }, cwd: "web", label: "dev server", name: "dev" },
    ws: { argv: ["bash"], workspace: "feature-x" },
    bare: { label: "no argv" },
  };

  it("resolves argv, env, a cwd relative to the CLI's cwd, name and label; trailing argv wins", () => {
    expect(resolvePresetLaunch(presets, { preset: "dev", cliCwd: "/home/me/proj" })).toEqual({
      argv: ["npm", "run", "dev"],
      env: { PORT: "3000" },
      cwd: "/home/me/proj/web",
      workspace: undefined,
      name: "dev",
      label: "dev server",
    });
    expect(resolvePresetLaunch(presets, { preset: "dev", argv: ["vite"], cwd: "/abs" })).toMatchObject({
      argv: ["vite"],
      cwd: "/abs",
    });
    expect(resolvePresetLaunch(undefined, { argv: ["ls"] })).toMatchObject({ argv: ["ls"], env: {} });
    expect(
      resolvePresetLaunch({ home: { argv: ["ls"], cwd: "~/src" } }, { preset: "home", cliCwd: "/elsewhere" }),
    ).toMatchObject({ cwd: join(homedir(), "src") });
  });

  it("refuses an unknown preset, and a preset without argv and no trailing command", () => {
    expect(() => resolvePresetLaunch(presets, { preset: "nope" })).toThrow(
      /no terminal preset "nope"; presets in terminalPresets: dev, ws, bare/,
    );
    expect(() => resolvePresetLaunch(presets, { preset: "bare" })).toThrow(/has no argv/);
    expect(() => resolvePresetLaunch(presets, {})).toThrow(/pass a command after/);
  });

  it("falls back to the workspace's worktree directory when no cwd is given", async () => {
    h = await makeHarness();
    const root = join(h.home, "worktrees");
    await mkdir(join(root, "api", "feature-x"), { recursive: true });
    expect(resolvePresetLaunch(presets, { preset: "ws" })).toMatchObject({ cwd: undefined, workspace: "feature-x" });
    expect(await findWorkspaceDir(root, "feature-x")).toBe(join(root, "api", "feature-x"));
    expect(await findWorkspaceDir(root, "other")).toBeUndefined();
  });
});
