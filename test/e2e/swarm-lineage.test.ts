/**
 * run-swarm and spawn lineage: a run started from inside a session (its SVC_SESSION_TOKEN) nests
 * its steps under that session per spawn.attach, so depth, role and delegation apply; --no-attach
 * opts out; every step's session carries its run and step, in listings and in its transcript.
 * Real daemon; the parent is the shell fixture agent running the real CLI.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { CLI_PATH } from "../support/paths.js";
import { fixtureAgent } from "../core/sessions/harness.js";

const fx = useDaemonProcess({
  prefix: "svc-e2e-swarm-lineage-",
  config: { acpAgents: { echo: fixtureAgent("echo-agent.mjs"), shell: fixtureAgent("shell-agent.mjs") } },
  setup: async ({ home }) => {
    await mkdir(join(home, "work"));
  },
});

const work = () => join(fx.home, "work");
const cli = (args: string[]) => runCli(args, { home: fx.home, cwd: work() });

interface Descriptor {
  id: string;
  parentId?: string;
  depth: number;
  role: string;
  delegation?: number;
  label?: string;
  eventsPath: string;
  run?: { runId: string; stepId: string };
}

async function post(path: string, body: unknown): Promise<Response> {
  return fx.daemon.fetch(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** A shell session (the parent), started over HTTP with `extra` (e.g. delegation). */
async function shellSession(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await post("/sessions", { adapter: "shell", cwd: work(), dedupe: false, ...extra });
  expect(res.status).toBe(201);
  return ((await res.json()) as { descriptor: { id: string } }).descriptor.id;
}

/** Runs `svc <args>` inside session `id` (as its agent would) and returns the CLI's exit code and output. */
async function inSession(id: string, args: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const res = await post(`/sessions/${id}/prompt`, { text: `${process.execPath} ${CLI_PATH} ${args}`, wait: true });
  return JSON.parse(((await res.json()) as { result: { text: string } }).result.text);
}

async function sessions(): Promise<Descriptor[]> {
  return ((await (await fx.daemon.fetch("/sessions")).json()) as { sessions: Descriptor[] }).sessions;
}

async function swarm(name: string): Promise<string> {
  const file = join(work(), `${name}.swarm.json`);
  await writeFile(
    file,
    JSON.stringify({
      schema: "svc/swarm/v1",
      name,
      steps: [
        { id: "a", model: "m", adapter: "echo", prompt: "one" },
        { id: "b", model: "m", adapter: "echo", needs: ["a"], prompt: "two" },
      ],
    }),
  );
  return file;
}

describe("run-swarm under spawn.attach", () => {
  it("a run started by a session nests its steps under it (depth, role, delegation) and records parentSessionId; each step session carries runId and stepId", async () => {
    const parent = await shellSession({ delegation: 2 });
    const dry = await inSession(parent, `run-swarm ${await swarm("nested")} --dry-run --json`);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).parentSessionId).toBe(parent);
    const r = await inSession(parent, `run-swarm ${await swarm("nested")} --json`);
    expect(r.code, r.stderr).toBe(0);
    const { run } = JSON.parse(r.stdout);
    expect(run).toMatchObject({ state: "succeeded", parentSessionId: parent });
    expect(JSON.parse(await readFile(join(fx.home, "runs", run.runId, "run.json"), "utf8")).parentSessionId).toBe(
      parent,
    );

    const all = await sessions();
    for (const stepId of ["a", "b"]) {
      const d = all.find((s) => s.id === run.steps[stepId].sessionId)!;
      expect(d).toMatchObject({
        parentId: parent,
        depth: 1,
        role: "executor",
        delegation: 1,
        label: `${run.runId}/${stepId}`,
        run: { runId: run.runId, stepId },
      });
      const starting = (await readFile(d.eventsPath, "utf8"))
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .find((e) => e.type === "session.starting");
      expect(starting.data).toMatchObject({ parentId: parent, run: { runId: run.runId, stepId } });
    }
    // The CLI's listing nests them under the parent; MCP's session_list carries the run too.
    const ls = await cli(["sessions", "ls"]);
    expect(ls.stdout).toMatch(new RegExp(`${run.steps.a.sessionId}\\s+${parent}\\s+echo\\s.*${run.runId}/a`));
    const client = new Client({ name: "svc-test", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
    try {
      const listed = (await client.callTool({ name: "session_list", arguments: {} })).structuredContent as {
        sessions: Descriptor[];
      };
      expect(listed.sessions.find((s) => s.id === run.steps.b.sessionId)).toMatchObject({
        parentId: parent,
        run: { runId: run.runId, stepId: "b" },
      });
    } finally {
      await client.close();
    }
  });

  it("--no-attach starts the steps as root sessions; they still carry their run", async () => {
    const parent = await shellSession();
    const r = await inSession(parent, `run-swarm ${await swarm("detached")} --no-attach --json`);
    expect(r.code, r.stderr).toBe(0);
    const { run } = JSON.parse(r.stdout);
    expect(run.parentSessionId).toBeUndefined();
    const d = (await sessions()).find((s) => s.id === run.steps.a.sessionId)!;
    expect(d.parentId).toBeUndefined();
    expect(d).toMatchObject({ depth: 0, run: { runId: run.runId, stepId: "a" } });
  });

  it("a session with delegation 0 may not start a run; a run outside any session has root steps", async () => {
    const parent = await shellSession({ delegation: 0 });
    const r = await inSession(parent, `run-swarm ${await swarm("refused")} --json`);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: "forbidden",
      message: expect.stringContaining(`session ${parent} may not spawn sessions: its delegation is 0`),
    });

    const outside = await cli(["run-swarm", await swarm("outside"), "--json"]);
    expect(outside.code, outside.stderr).toBe(0);
    const { run } = JSON.parse(outside.stdout);
    expect(run.parentSessionId).toBeUndefined();
    expect((await sessions()).find((s) => s.id === run.steps.a.sessionId)).toMatchObject({
      depth: 0,
      run: { runId: run.runId, stepId: "a" },
    });
  });

  it("an explicit parentSessionId that names no session refuses the run (404)", async () => {
    const swarmBody = JSON.parse(await readFile(await swarm("orphan"), "utf8"));
    const res = await post("/swarm/runs", {
      swarm: swarmBody,
      baseDir: work(),
      parentSessionId: "ses_01ARZ3NDEKTSV4RRFFQ69G5FAV",
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain(
      "parent session ses_01ARZ3NDEKTSV4RRFFQ69G5FAV does not exist",
    );
  });
});
