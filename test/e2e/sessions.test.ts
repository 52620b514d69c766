import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { FIXTURE_AGENTS, fixtureAgent } from "../core/sessions/harness.js";

let exportedId = "";

const body = async (r: Response | Promise<Response>): Promise<Record<string, any>> =>
  (await (await r).json()) as Record<string, any>;

async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const fx = useDaemonProcess({
  prefix: "svc-e2e-sessions-",
  config: {
    acpAgents: { ...FIXTURE_AGENTS, gemini: fixtureAgent("echo-agent.mjs", { name: "Gemini shadowed by a fixture" }) },
    terminalPresets: {
      hello: {
        argv: ["bash", "-c", "echo preset:$GREETING; pwd"],
        env: { GREETING: "hola" },
        cwd: "sub",
        label: "greeter",
      },
    },
    futureKey: { kept: true },
  },
  setup: async ({ home }) => {
    await mkdir(join(home, "sub"));
  },
  env: { SVC_TERMINAL_NO_PTY: "1" },
});

describe("sessions through the daemon, the CLI and the routes", () => {
  it("svc sessions run prints the agent's answer; the transcript is on disk and served by the route", async () => {
    const r = await runCli(["sessions", "run", "--adapter", "echo", "--prompt", "ping", "--keep", "--json"], {
      home: fx.home,
    });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.result).toMatchObject({ stopReason: "end_turn", text: "echo: ping" });
    const { descriptor } = out;
    expect(descriptor.eventsPath).toBe(join(fx.home, "sessions", descriptor.id, "events.jsonl"));
    const disk = (await readFile(descriptor.eventsPath, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(disk.map((l: { type: string }) => l.type)).toContain("turn.ended");
    const res = await fx.daemon.fetch(`/sessions/${descriptor.id}/events`, { auth: false });
    expect(res.status).toBe(200);
    const served = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(served.slice(0, disk.length)).toEqual(disk);
    const conv = await body(fx.daemon.fetch(`/conversations/${descriptor.id}`, { auth: false }));
    expect(conv.messages).toEqual([
      expect.objectContaining({ role: "user", text: "ping" }),
      expect.objectContaining({ role: "agent", text: "echo: ping" }),
    ]);
  });

  it("follow mode streams live lines until the session ends", async () => {
    const start = await body(
      fx.daemon.fetch("/sessions", {
        method: "POST",
        body: JSON.stringify({ adapter: "slow", cwd: fx.home, prompt: "watch" }),
        headers: { "content-type": "application/json" },
      }),
    );
    const id = start.descriptor.id;
    const res = await fx.daemon.fetch(`/sessions/${id}/events?follow=1`, { auth: false });
    expect(res.headers.get("content-type")).toContain("application/x-ndjson");
    const reader = res.body!.getReader();
    let text = "";
    const dec = new TextDecoder();
    while (!text.includes('"turn.ended"')) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    expect(text).toContain("tick 3");
    await fx.daemon.fetch(`/sessions/${id}/stop`, { method: "POST" });
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += dec.decode(value);
    }
    const seqs = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l).seq);
    expect(seqs).toEqual(seqs.map((_: number, i: number) => i + 1));
    expect(text).toContain('"session.ended"');
  });

  it("svc sessions run reports a crashed agent with exit 1; transcripts of unknown sessions are 404", async () => {
    const r = await runCli(["sessions", "run", "--adapter", "crash", "--prompt", "x"], { home: fx.home });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/exited \(code 3.*simulated provider failure/);
    expect((await fx.daemon.fetch("/sessions/ses_nope/events", { auth: false })).status).toBe(404);
    expect((await fx.daemon.fetch("/sessions/bad%20id/events", { auth: false })).status).toBe(400);
  });

  it("a terminal session (a given command) needs the token even from loopback; agent sessions and reads do not", async () => {
    const denied = await fx.daemon.fetch("/sessions/terminal", {
      method: "POST",
      auth: false,
      body: JSON.stringify({ argv: ["true"] }),
      headers: { "content-type": "application/json" },
    });
    expect(denied.status).toBe(401);
    expect((await fx.daemon.fetch("/sessions", { auth: false })).status).toBe(200);
    const bad = await fx.daemon.fetch("/sessions", {
      method: "POST",
      body: JSON.stringify({ adapter: "nope", cwd: fx.home }),
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(404);
    expect((await body(bad)).error.message).toContain("svc acp add nope");
  });

  it("an ACP agent from the config shadows the catalog entry of the same slug", async () => {
    const r = await runCli(["sessions", "run", "--adapter", "gemini", "--prompt", "who", "--json"], { home: fx.home });
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.descriptor).toMatchObject({ adapter: "gemini", source: "config" });
    expect(out.result.text).toBe("echo: who");
    const ls = await runCli(["acp", "ls", "--json"], { home: fx.home });
    const gemini = JSON.parse(ls.stdout).agents.find((a: { slug: string }) => a.slug === "gemini");
    expect(gemini).toMatchObject({ source: "config", shadows: ["catalog"], onPath: true });
  });

  it("svc sessions terminal -- bash -lc 'echo hi' records hi in terminal.jsonl", async () => {
    const r = await runCli(["sessions", "terminal", "--json", "--", "bash", "-lc", "echo hi"], { home: fx.home });
    expect(r.stderr).toBe("");
    const { descriptor } = JSON.parse(r.stdout);
    expect(descriptor.terminalPath).toBe(join(fx.home, "sessions", descriptor.id, "terminal.jsonl"));
    await until(
      async () => (await readFile(descriptor.terminalPath, "utf8").catch(() => "")).includes("hi"),
      "terminal output",
    );
    const lines = (await readFile(descriptor.terminalPath, "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { data: { text: string } }) => l.data.text).join("")).toBe("hi\n");
    await until(
      async () => (await body(fx.daemon.fetch(`/sessions/${descriptor.id}`))).descriptor.state === "ended",
      "terminal exit",
    );
  });

  it("a terminal preset applies argv, env over the daemon's, a cwd relative to the CLI's cwd and the label", async () => {
    const r = await runCli(["sessions", "terminal", "--preset", "hello", "--json"], { home: fx.home, cwd: fx.home });
    expect(r.stderr).toBe("");
    const { descriptor } = JSON.parse(r.stdout);
    expect(descriptor).toMatchObject({ label: "greeter", cwd: join(fx.home, "sub") });
    await until(
      async () => (await readFile(descriptor.terminalPath, "utf8").catch(() => "")).includes(join(fx.home, "sub")),
      "preset output",
    );
    expect(await readFile(descriptor.terminalPath, "utf8")).toContain("preset:hola");
    const missing = await runCli(["sessions", "terminal", "--preset", "nope"], { home: fx.home });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no terminal preset "nope"');
  });

  it("svc sessions list, prompt and export work against the daemon", async () => {
    const ok = async (args: string[]) => {
      const r = await runCli(args, { home: fx.home });
      expect(r, `svc ${args.join(" ")}`).toMatchObject({ code: 0, stderr: "" });
      return r.stdout;
    };
    const started = JSON.parse(
      await ok(["sessions", "start", "--adapter", "echo", "--label", "lister", "--option", "model=x", "--json"]),
    );
    const id = started.descriptor.id;
    expect(started.descriptor.options).toEqual({ model: "x" });
    expect(await ok(["sessions", "prompt", id, "hello there", "--wait"])).toContain("echo: hello there");
    const list = JSON.parse(await ok(["sessions", "list", "--json"]));
    expect(list.sessions.find((s: { id: string }) => s.id === id)).toMatchObject({ label: "lister", turns: 1 });
    expect(await ok(["sessions", "list"])).toContain("lister");
    const exp = JSON.parse(await ok(["sessions", "export", id]));
    expect(exp.events.some((l: { type: string }) => l.type === "turn.ended")).toBe(true);
    expect(await ok(["sessions", "stop", id])).toContain(`stopped ${id}`);
    exportedId = id;
  });

  it("svc sessions export reads the transcript from disk when no daemon runs", async () => {
    await fx.daemon.stop();
    const exp = await runCli(["sessions", "export", exportedId], { home: fx.home });
    expect(exp.stderr).toBe("");
    const out = JSON.parse(exp.stdout);
    expect(out.eventsPath).toBe(join(fx.home, "sessions", exportedId, "events.jsonl"));
    expect(out.events.map((l: { type: string }) => l.type)).toContain("session.ended");
    expect((await runCli(["sessions", "export", "ses_missing"], { home: fx.home })).code).toBe(1);
  });
});
