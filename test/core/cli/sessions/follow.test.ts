/**
 * `svc sessions follow` against a real daemon and a real (fixture) ACP agent: the follower is a
 * child process whose stdout is read as it grows; every wait is on what it printed or on its exit.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { FIXTURE_AGENTS } from "../../sessions/harness.js";
import { childEnv, makeTempHome, runCli, useDaemonProcess } from "../../../support/cli.js";
import { CLI_PATH } from "../../../support/paths.js";
import { until } from "../../../support/until.js";

const fx = useDaemonProcess({ prefix: "svc-cli-follow-", config: { acpAgents: FIXTURE_AGENTS } });

/** `svc <args>` as a running child: its stdout and stderr so far, and its exit code once it exits. */
function follower(args: string[]) {
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    env: childEnv(fx.home),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (d) => (out.stdout += d));
  child.stderr.on("data", (d) => (out.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, out, exited };
}

async function startEcho(): Promise<string> {
  const r = await runCli(["sessions", "start", "--adapter", "echo", "--cwd", fx.home, "--json"], { home: fx.home });
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout).descriptor.id as string;
}

describe("svc sessions follow", () => {
  it("prints the transcript so far, each new entry as it comes, and exits 0 with the end when the session stops", async () => {
    const id = await startEcho();
    const f = follower(["sessions", "follow", id]);
    try {
      await until(() => (f.out.stdout.includes("started: pid") ? true : undefined), `the start in:\n${f.out.stdout}`);
      expect(f.out.stdout).toMatch(/^\d\d:\d\d:\d\d starting: echo \(config\) in /m);
      expect(f.out.stdout).toMatch(/^\d\d:\d\d:\d\d started: pid \d+, echo-agent 1\.0\.0$/m);
      const prompt = await runCli(["sessions", "prompt", id, "hello follower"], { home: fx.home });
      expect(prompt.code, prompt.stderr).toBe(0);
      await until(
        () => (/^\d\d:\d\d:\d\d turn ended: end_turn$/m.test(f.out.stdout) ? true : undefined),
        `the echoed turn in:\n${f.out.stdout}`,
      );
      expect(f.out.stdout).toMatch(/^\d\d:\d\d:\d\d human: hello follower$/m);
      expect(f.out.stdout).toMatch(/^\d\d:\d\d:\d\d agent: echo: hello follower$/m);
      expect(f.child.exitCode, "the follower still runs while the session does").toBeNull();
      const stop = await runCli(["sessions", "stop", id], { home: fx.home });
      expect(stop.code, stop.stderr).toBe(0);
      expect(await f.exited, f.out.stderr).toBe(0);
      expect(f.out.stderr).toBe("");
      expect(f.out.stdout).toMatch(/^\d\d:\d\d:\d\d ended: stopped\b.*\n$/m);
      expect(f.out.stdout.trimEnd().split("\n").at(-1)).toMatch(/ended: stopped/);
    } finally {
      f.child.kill();
    }
  });

  it("--json: the raw entries, one JSON object per line, in seq order; an ended session's transcript, then exit 0", async () => {
    const id = await startEcho();
    expect((await runCli(["sessions", "prompt", id, "once", "--wait"], { home: fx.home })).code).toBe(0);
    expect((await runCli(["sessions", "stop", id], { home: fx.home })).code).toBe(0);
    const r = await runCli(["sessions", "follow", id, "--json"], { home: fx.home });
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { seq: number; type: string });
    expect(lines.map((l) => l.seq)).toEqual(lines.map((_, i) => i + 1));
    expect(lines.map((l) => l.type)).toEqual(
      expect.arrayContaining(["session.starting", "session.started", "prompt", "update", "turn.ended"]),
    );
    expect(lines.at(-1)?.type).toBe("session.ended");
    const after = await runCli(["sessions", "follow", id, "--json", "--after", String(lines.length - 1)], {
      home: fx.home,
    });
    expect(
      after.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type),
    ).toEqual(["session.ended"]);
    const since = await runCli(["sessions", "follow", id, "--since", String(Date.now() + 60_000)], { home: fx.home });
    expect(since).toMatchObject({ code: 0, stdout: "" });
  });

  it("an unknown session is an error naming it; a bad --since a usage error", async () => {
    const r = await runCli(["sessions", "follow", "ses_01NOSUCHSESSION0000000000"], { home: fx.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("no session ses_01NOSUCHSESSION0000000000");
    const bad = await runCli(["sessions", "follow", "ses_x", "--since", "soon"], { home: fx.home });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--since "soon" is invalid');
  });

  it("without a daemon: daemon_not_running, as the other verbs say it", async () => {
    const { home, cleanup } = await makeTempHome("svc-cli-follow-none-");
    try {
      const r = await runCli(["sessions", "follow", "ses_x", "--json"], { home });
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stdout).error.code).toBe("daemon_not_running");
    } finally {
      await cleanup();
    }
  });
});
