import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { findWorkspaceDir, resolvePresetLaunch } from "../../../core/sessions/terminal-launch.js";
import { readTranscript } from "../../../core/sessions/transcript-reader.js";
import { loadPty } from "../../../plugins/terminal-presets/pty.js";
import { makeHarness, until, type Harness } from "../../core/sessions/harness.js";

let h: Harness;
afterEach(async () => h?.cleanup());

describe("terminal sessions (real commands)", () => {
  it("records stdout and stderr in terminal.jsonl and the exit in events.jsonl", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["bash", "-c", "echo out; echo err >&2; exit 4"] });
    expect(descriptor).toMatchObject({ kind: "terminal", source: "terminal", terminalPath: join(h.runtime.eventsDir, descriptor.id, "terminal.jsonl") });
    await until(() => h.runtime.state(descriptor.id) === "ended", "exit");
    await h.runtime.get(descriptor.id).closing;
    const out = await readTranscript(descriptor.terminalPath!);
    const text = (s: string) => out.filter((l) => (l.data as { stream: string }).stream === s).map((l) => (l.data as { text: string }).text).join("");
    expect([text("stdout"), text("stderr")]).toEqual(["out\n", "err\n"]);
    expect(h.runtime.describe(h.runtime.get(descriptor.id)).exit).toMatchObject({ code: 4 });
    expect((await readTranscript(descriptor.eventsPath)).map((l) => l.type)).toContain("session.ended");
  });

  it("takes input through prompt (stdin) and stops the process on stop", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["cat"], env: { IGNORED: "1" } });
    h.runtime.prompt(descriptor.id, "typed line", { sender: { kind: "human" }, urgency: "queue" });
    const s = h.runtime.get(descriptor.id);
    await until(async () => (await s.terminal!.flushed(), (await readTranscript(descriptor.terminalPath!)).length > 0), "echoed input");
    expect((await readTranscript(descriptor.terminalPath!))[0]!.data).toMatchObject({ text: "typed line\n" });
    expect((await h.runtime.stop(descriptor.id)).state).toBe("ended");
    expect(() => process.kill(descriptor.pid!, 0)).toThrow();
  });

  it("env is layered over the daemon's environment; a missing command is not_found", async () => {
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["bash", "-c", 'echo "$GREETING:${PATH:+has-path}"'], env: { GREETING: "hola" } });
    await until(() => h.runtime.state(descriptor.id) === "ended", "exit");
    await h.runtime.get(descriptor.id).closing;
    expect((await readTranscript(descriptor.terminalPath!)).map((l) => (l.data as { text: string }).text).join("")).toBe("hola:has-path\n");
    await expect(h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["svc-no-such-command"] })).rejects.toMatchObject({ code: "not_found" });
  });

  it("uses a plain child process when the pty library is absent or switched off", async () => {
    expect(await loadPty({ SVC_TERMINAL_NO_PTY: "1" })).toBeUndefined();
    h = await makeHarness();
    const { descriptor } = await h.runtime.start({ adapter: "terminal", cwd: h.home, argv: ["true"] });
    expect(descriptor.info?.transport).toBe((await loadPty()) ? "pty" : "pipe");
  });
});

describe("terminal presets", () => {
  const presets = { dev: { argv: ["npm", "run", "dev"], env: { PORT: "3000" }, cwd: "web", label: "dev server", name: "dev" }, ws: { argv: ["bash"], workspace: "feature-x" }, bare: { label: "no argv" } };

  it("resolves argv, env, a cwd relative to the CLI's cwd, name and label; trailing argv wins", () => {
    expect(resolvePresetLaunch(presets, { preset: "dev", cliCwd: "/home/me/proj" })).toEqual({ argv: ["npm", "run", "dev"], env: { PORT: "3000" }, cwd: "/home/me/proj/web", workspace: undefined, name: "dev", label: "dev server" });
    expect(resolvePresetLaunch(presets, { preset: "dev", argv: ["vite"], cwd: "/abs" })).toMatchObject({ argv: ["vite"], cwd: "/abs" });
    expect(resolvePresetLaunch(undefined, { argv: ["ls"] })).toMatchObject({ argv: ["ls"], env: {} });
  });

  it("refuses an unknown preset, and a preset without argv and no trailing command", () => {
    expect(() => resolvePresetLaunch(presets, { preset: "nope" })).toThrow(/no terminal preset "nope"; presets in terminalPresets: dev, ws, bare/);
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
