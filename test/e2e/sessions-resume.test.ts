/**
 * Resuming sessions with the real daemon as a child process (docs/sessions.md "Resume"): a session
 * of a resumable agent comes back under its id after the daemon is killed -9 and after it ended,
 * with its agent's history (the fixture agent keeps it in a file and replays it on session/load),
 * its transcript going on and its lineage kept; every agent that cannot resume says why.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, describe, expect, it } from "vitest";
import { processRunning as running } from "../support/process-alive.js";
import { transcriptLines as lines } from "../support/transcript-lines.js";
import { runCli, useDaemonProcess, type DaemonProcess } from "../support/cli.js";
import { FIXTURE_AGENTS, fixtureAgent, until } from "../core/sessions/harness.js";

/** Every agent pid a test started, killed at the end whatever happened. */
const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
});

async function call(
  d: DaemonProcess,
  method: string,
  path: string,
  payload?: unknown,
): Promise<{ status: number; body: Record<string, any> }> {
  const res = await d.fetch(path, {
    method,
    ...(payload !== undefined
      ? { body: JSON.stringify(payload), headers: { "content-type": "application/json" } }
      : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

async function ok(d: DaemonProcess, method: string, path: string, payload?: unknown): Promise<Record<string, any>> {
  const r = await call(d, method, path, payload);
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body;
}

/** Starts a session with a first prompt and waits for its answer. */
async function startWith(
  d: DaemonProcess,
  adapter: string,
  cwd: string,
  prompt: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; pid: number; eventsPath: string; text: string }> {
  const body = await ok(d, "POST", "/sessions", { adapter, cwd, prompt, wait: true, ...extra });
  started.push(body.descriptor.pid);
  return { ...body.descriptor, text: body.result.text };
}

async function ask(d: DaemonProcess, id: string, text: string): Promise<string> {
  const body = await ok(d, "POST", `/sessions/${id}/prompt`, { text, wait: true });
  expect(body.result.error, JSON.stringify(body.result)).toBeUndefined();
  return body.result.text;
}

/** The daemon's event stream from its start, read until `found` holds for what arrived (or 30 s). */
async function eventsUntil(d: DaemonProcess, found: (text: string) => boolean): Promise<string> {
  const ac = new AbortController();
  const deadline = setTimeout(() => ac.abort(), 30_000);
  let text = "";
  try {
    const reader = (
      await d.fetch("/events", { headers: { "last-event-id": "0" }, signal: ac.signal })
    ).body!.getReader();
    while (!found(text)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString("utf8");
    }
  } catch {
    // aborted at the deadline
  } finally {
    clearTimeout(deadline);
    ac.abort();
  }
  return text;
}

const keeper = fixtureAgent("resumable-agent.mjs", { resumable: true });

describe.runIf(existsSync("/proc/self/stat"))("resuming a session", () => {
  const fx = useDaemonProcess({
    prefix: "svc-e2e-resume-",
    config: {
      acpAgents: {
        keeper,
        unmarked: fixtureAgent("resumable-agent.mjs"),
        noload: { ...FIXTURE_AGENTS.echo, resumable: true },
      },
    },
    env: { SVC_ORPHAN_STOP_GRACE_MS: "100000" },
  });

  let parent: { id: string; pid: number; eventsPath: string };
  let child: { id: string; pid: number; eventsPath: string };

  it("after the daemon is killed -9: same id, the agent's history, the transcript going on, the lineage kept", async () => {
    parent = await startWith(fx.daemon, "keeper", fx.home, "my name is Ada", {
      label: "the parent",
      options: { model: "m-1" },
    });
    child = await startWith(fx.daemon, "keeper", fx.home, "child speaking", {
      parentSessionId: parent.id,
      delegation: 0,
    });
    const before = await lines(parent.eventsPath);
    const childBefore = (await ok(fx.daemon, "GET", `/sessions/${child.id}`)).descriptor;
    expect(childBefore).toMatchObject({ parentId: parent.id, depth: 1 });

    await fx.daemon.kill9();
    expect(running(parent.pid), "the agent after its daemon died").toBe(true);
    const daemon = await fx.start();
    // At once, while the sweep of the killed daemon's sessions may still run: resume waits for it.
    const cli = await runCli(["sessions", "resume", parent.id], { home: fx.home });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`resumed ${parent.id} (keeper, idle, 1 turn before)`);
    expect(running(parent.pid), "the killed daemon's agent").toBe(false);

    expect(await ask(daemon, parent.id, "what did I say first?")).toBe("you said first: my name is Ada");

    // The answer reached the caller; its transcript line may land a moment later (a busy machine).
    const updates = async () => (await lines(parent.eventsPath)).filter((l) => l.type === "update").length;
    await until(async () => (await updates()) >= 2, "the answer's update in the transcript");
    const after = await lines(parent.eventsPath);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.map((l) => l.seq)).toEqual(after.map((_, i) => i + 1));
    const types = after.slice(before.length).map((l) => l.type);
    expect(types.slice(0, 4)).toEqual(["session.ended", "session.resumed", "session.started", "prompt.received"]);
    expect(after[before.length]!.data).toMatchObject({ error: "daemon_exited" });
    // The agent replayed its history (two messages) on session/load; the transcript already had it.
    const restarted = after.find((l, i) => i > before.length && l.type === "session.started")!;
    expect(restarted.data.info).toMatchObject({ loaded: true, replayedUpdates: 2 });
    expect(after.filter((l) => l.type === "update").map((l) => l.data.update.content.text)).toEqual([
      "noted: my name is Ada",
      "you said first: my name is Ada",
    ]);

    const d = (await ok(daemon, "GET", `/sessions/${parent.id}`)).descriptor;
    expect(d).toMatchObject({
      id: parent.id,
      state: "idle",
      turns: 2,
      label: "the parent",
      options: { model: "m-1" },
      depth: 0,
    });
    started.push(d.pid);

    const resumedChild = (await ok(daemon, "POST", `/sessions/${child.id}/resume`)).descriptor;
    started.push(resumedChild.pid);
    expect(resumedChild).toMatchObject({
      id: child.id,
      parentId: parent.id,
      depth: 1,
      role: childBefore.role,
      delegation: 0,
      state: "idle",
    });
    expect(await ask(daemon, child.id, "what did I say first?")).toBe("you said first: child speaking");
  });

  it("a resumed session whose daemon is killed again is swept and resumed again", async () => {
    const pid = (await ok(fx.daemon, "GET", `/sessions/${parent.id}`)).descriptor.pid;
    await fx.daemon.kill9();
    const daemon = await fx.start();
    await until(
      async () => (await lines(parent.eventsPath)).at(-1)?.type === "session.ended",
      "the sweep to end the resumed life",
    );
    expect((await lines(parent.eventsPath)).at(-1)!.data).toEqual({
      code: null,
      signal: "SIGTERM",
      error: "daemon_exited",
    });
    expect(running(pid)).toBe(false);
    // Shown from its record although this daemon life never ran it.
    expect((await ok(daemon, "GET", `/sessions/${parent.id}`)).descriptor).toMatchObject({
      id: parent.id,
      state: "ended",
      turns: 2,
      exit: { error: "daemon_exited" },
    });
    const d = (await ok(daemon, "POST", `/sessions/${parent.id}/resume`)).descriptor;
    started.push(d.pid);
    expect(await ask(daemon, parent.id, "what did I say first?")).toBe("you said first: my name is Ada");
  });

  it("after a normal end, through the MCP tool; resuming a live session is refused", async () => {
    await ok(fx.daemon, "POST", `/sessions/${parent.id}/stop`);
    const client = new Client({ name: "svc-resume-test", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    try {
      const r = await client.callTool({ name: "resume_agent_session", arguments: { sessionId: parent.id } });
      expect(r.isError, JSON.stringify(r.content)).not.toBe(true);
      expect((r.structuredContent as any).descriptor).toMatchObject({ id: parent.id, state: "idle", turns: 3 });
      started.push((r.structuredContent as any).descriptor.pid);
      expect(await ask(fx.daemon, parent.id, "what did I say first?")).toBe("you said first: my name is Ada");
      const resumed = new RegExp(
        `session:resumed[^\\n]*\\n(data: )?[^\\n]*"sessionId":"${parent.id}"[^\\n]*"resumes":3`,
      );
      expect(await eventsUntil(fx.daemon, (t) => resumed.test(t))).toMatch(resumed);

      const again = await client.callTool({ name: "resume_agent_session", arguments: { sessionId: parent.id } });
      expect(again.isError).toBe(true);
      expect((again.content as Array<{ text: string }>)[0]!.text).toContain(`session ${parent.id} is live (idle)`);
    } finally {
      await client.close();
    }
    const live = await call(fx.daemon, "POST", `/sessions/${parent.id}/resume`);
    expect(live.status).toBe(409);
    expect(live.body.error).toMatchObject({ code: "conflict" });
    const cli = await runCli(["sessions", "resume", parent.id], { home: fx.home });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain("only an ended session can be resumed");
  });

  it("an agent not marked resumable, one that does not advertise loadSession, and an unknown id each say so", async () => {
    const unmarked = await startWith(fx.daemon, "unmarked", fx.home, "hello");
    await ok(fx.daemon, "POST", `/sessions/${unmarked.id}/stop`);
    const r = await call(fx.daemon, "POST", `/sessions/${unmarked.id}/resume`);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe("not_resumable");
    expect(r.body.error.message).toContain("set acpAgents.unmarked.resumable: true");
    const cli = await runCli(["sessions", "resume", unmarked.id], { home: fx.home });
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain(`ACP agent "unmarked" is not marked resumable`);

    const noload = await startWith(fx.daemon, "noload", fx.home, "hello");
    await ok(fx.daemon, "POST", `/sessions/${noload.id}/stop`);
    const n = await call(fx.daemon, "POST", `/sessions/${noload.id}/resume`);
    expect(n.status).toBe(409);
    expect(n.body.error.code).toBe("not_resumable");
    expect(n.body.error.message).toContain("does not advertise session loading");
    const d = (await ok(fx.daemon, "GET", `/sessions/${noload.id}`)).descriptor;
    expect(d.state).toBe("ended");
    expect(d.exit.error).toContain("does not advertise session loading");

    const unknown = await call(fx.daemon, "POST", "/sessions/ses_NOSUCHSESSION/resume");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
  });

  it("the record holds no secret and is checked on read: a damaged one is told, never resumed", async () => {
    const record = join(fx.home, "sessions", child.id, "session.json");
    const text = await readFile(record, "utf8");
    expect(JSON.parse(text)).toMatchObject({
      version: 1,
      record: { id: child.id, parentId: parent.id, agentSessionId: expect.stringMatching(/^fx-res-/) },
    });
    expect(text).not.toContain(fx.daemon.token);
    expect(text).not.toMatch(/SVC_SESSION_TOKEN|apiKey"|token"/);

    // The child's agent ran in the daemon life before this one (the sweep ended it).
    await until(async () => (await lines(child.eventsPath)).at(-1)?.type === "session.ended", "the child's end");
    const edited = text.replace(`"depth":1`, `"depth":0`);
    await writeFile(record, edited);
    const r = await call(fx.daemon, "POST", `/sessions/${child.id}/resume`);
    expect(r.status).toBe(409);
    expect(r.body.error).toMatchObject({ code: "not_resumable" });
    expect(r.body.error.message).toContain(`its record ${record} is damaged (its checksum does not match its content)`);
    expect(await readFile(record, "utf8")).toBe(edited);
    expect(fx.daemon.logs()).toContain("a session record is damaged");
  });
});
