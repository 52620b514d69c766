/**
 * run-swarm end to end: the real daemon runs swarm files whose steps are the fixture ACP agents as
 * real processes, through the real CLI and the `/swarm/runs` routes.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { FIXTURE_AGENTS, fixtureAgent, until } from "../core/sessions/harness.js";
import { makeRepo } from "../core/workspaces/support.js";

const fx = useDaemonProcess({
  prefix: "svc-e2e-swarm-",
  config: {
    acpAgents: {
      ...FIXTURE_AGENTS,
      echo: fixtureAgent("echo-agent.mjs", { models: { allowed: ["fx-echo"] } }),
      slow: fixtureAgent("slow-agent.mjs", { env: { SLOW_AGENT_TICKS: "100000", SLOW_AGENT_INTERVAL_MS: "50" } }),
      steady: fixtureAgent("slow-agent.mjs", { env: { SLOW_AGENT_TICKS: "30", SLOW_AGENT_INTERVAL_MS: "100" } }),
      layers: fixtureAgent("echo-agent.mjs", {
        models: { allowed: ["fx-run", "fx-repo", "fx-config", "claude-opus-4-5"] },
      }),
    },
    models: { worker: "fx-echo", "layer.repo": "fx-config", "layer.run": "fx-config", "layer.config": "fx-config" },
    defaults: { adapters: { layers: { options: { fromDefaults: "yes" } } } },
  },
  setup: async ({ home }) => {
    await mkdir(join(home, "work"));
  },
});

async function swarmFile(name: string, steps: unknown[]): Promise<string> {
  const path = join(fx.home, "work", `${name}.swarm.json`);
  await writeFile(path, JSON.stringify({ schema: "svc/swarm/v1", name, steps }, null, 2));
  return path;
}

const cli = (args: string[]) => runCli(args, { home: fx.home, cwd: join(fx.home, "work") });

describe("svc run-swarm through the daemon", () => {
  it("runs three steps with needs, passing outputs along; records the run; ls and show list it", async () => {
    const file = await swarmFile("three", [
      { id: "a", model: "role:worker", prompt: "alpha" },
      { id: "b", model: "fx-echo", prompt: "beta" },
      { id: "c", model: "role:worker", needs: ["a", "b"], prompt: "got ${{ steps.a.output }} and ${{steps.b.output}}" },
    ]);
    const r = await cli(["run-swarm", file, "--json"]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const { run } = JSON.parse(r.stdout);
    expect(run.state).toBe("succeeded");
    expect(run.steps.c).toMatchObject({
      state: "succeeded",
      output: "echo: got echo: alpha and echo: beta",
      stopReason: "end_turn",
    });
    for (const id of ["a", "b", "c"]) expect(run.steps[id].sessionId).toMatch(/^ses_/);
    expect(run.plan.steps.find((s: { id: string }) => s.id === "a")).toMatchObject({
      model: { id: "fx-echo", source: "config", chain: [{ role: "worker", value: "fx-echo", source: "config" }] },
      adapter: { slug: "echo", chosenBy: "acpAgents", source: "config" },
      options: { model: "fx-echo" },
    });
    const dir = join(fx.home, "runs", run.runId);
    expect(await readFile(join(dir, "swarm.json"), "utf8")).toBe((await readFile(file, "utf8")) + "\n");
    const onDisk = JSON.parse(await readFile(join(dir, "run.json"), "utf8"));
    expect(onDisk).toMatchObject({ runId: run.runId, state: "succeeded", steps: { c: { state: "succeeded" } } });
    expect(onDisk.steps.a.startedAt).toBeLessThanOrEqual(onDisk.steps.c.startedAt);

    const ls = await cli(["run-swarm", "ls", "--json"]);
    expect(JSON.parse(ls.stdout).runs[0]).toMatchObject({
      runId: run.runId,
      name: "three",
      state: "succeeded",
      counts: { succeeded: 3 },
    });
    const show = await cli(["run-swarm", "show", run.runId]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/c\s+succeeded\s+ses_\S+\s+\S+s\s+echo: got echo: alpha and echo: beta/);
  });

  it("the resolved model reaches the agent as the spawn option `model`; a model no adapter fits fails its step", async () => {
    const file = await swarmFile("model-option", [
      { id: "m", model: "role:worker", options: { effort: "low" }, prompt: "env?" },
    ]);
    const r = await cli(["run-swarm", file, "--json", "--model", "worker=fx-echo-2"]);
    expect(r.code, r.stderr).toBe(1);
    const { run } = JSON.parse(r.stdout);
    // fx-echo-2 is listed by no acpAgents entry and not in the catalog: no adapter fits.
    expect(run.steps.m.error).toContain('no adapter fits model "fx-echo-2"');
    const ok = await cli(["run-swarm", file, "--json"]);
    const out = JSON.parse(JSON.parse(ok.stdout).run.steps.m.output);
    expect(out.meta.options).toEqual({ effort: "low", model: "fx-echo" });
  });

  it("in a real run each model layer wins in turn, with its source, and the agent gets that model over the spawn defaults", async () => {
    // Outside a git repository the swarm file's own directory holds the repository's models file.
    const dir = join(fx.home, "work", "layers");
    await mkdir(join(dir, ".svc"), { recursive: true });
    await writeFile(
      join(dir, ".svc", "models.json"),
      JSON.stringify({ models: { "layer.repo": "fx-repo", "layer.run": "fx-repo" } }),
    );
    const file = join(dir, "layers.swarm.json");
    const steps = ["run", "repo", "config"].map((l) => ({ id: l, model: `role:layer.${l}`, prompt: "env?" }));
    await writeFile(
      file,
      JSON.stringify({
        schema: "svc/swarm/v1",
        steps: [...steps, { id: "default", model: "role:review.large", prompt: "env?" }],
      }),
    );
    const r = await cli(["run-swarm", file, "--json", "--model", "layer.run=fx-run"]);
    expect(r.code, r.stderr).toBe(0);
    const { run } = JSON.parse(r.stdout);
    const expected = {
      run: ["fx-run", "run"],
      repo: ["fx-repo", "repository"],
      config: ["fx-config", "config"],
      default: ["claude-opus-4-5", "default"],
    } as const;
    for (const [id, [model, source]] of Object.entries(expected)) {
      const planned = run.plan.steps.find((s: { id: string }) => s.id === id);
      expect(planned.model, id).toMatchObject({ id: model, source });
      expect(planned.adapter, id).toMatchObject({ slug: "layers", chosenBy: "acpAgents" });
      expect(JSON.parse(run.steps[id].output).meta.options, id).toEqual({ fromDefaults: "yes", model });
    }
  });

  it("timeoutMinutes stops a step whose turn does not end and fails it; its dependents are skipped", async () => {
    const file = await swarmFile("timeout", [
      { id: "stuck", model: "x", adapter: "hang", timeoutMinutes: 0.002, prompt: "wait forever" },
      { id: "after", model: "x", adapter: "echo", needs: ["stuck"], prompt: "never" },
    ]);
    const r = await cli(["run-swarm", file, "--json"]);
    expect(r.code).toBe(1);
    const { run } = JSON.parse(r.stdout);
    expect(run.steps.stuck).toMatchObject({ state: "failed", stopReason: "timeout" });
    expect(run.steps.stuck.error).toContain(
      "the turn did not end within timeoutMinutes (0.002); the session was stopped",
    );
    expect(run.steps.after).toEqual({ state: "skipped", reason: "needs stuck, which failed" });
    const d = (await (await fx.daemon.fetch(`/sessions/${run.steps.stuck.sessionId}`)).json()) as {
      descriptor: { state: string };
    };
    expect(d.descriptor.state).toBe("ended");
  });

  it("a step's worktree goes through the spawn path: the dry run shows it, the step runs in a fresh tree of its repo", async () => {
    const repo = await makeRepo(join(fx.home, "work"), "wt-repo");
    const file = join(repo, "wt.swarm.json");
    await writeFile(
      file,
      JSON.stringify({
        schema: "svc/swarm/v1",
        steps: [{ id: "iso", model: "role:worker", worktree: "iso-tree", prompt: "env?" }],
      }),
    );
    const dry = await cli(["run-swarm", file, "--dry-run"]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(
      /iso\s+-\s+fx-echo \(role:worker@config\)\s+echo \(acpAgents\)\s+acpAgents models\s+worktree iso-tree/,
    );
    const r = await cli(["run-swarm", file, "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const { run } = JSON.parse(r.stdout);
    const cwd = JSON.parse(run.steps.iso.output).cwd as string;
    expect(cwd).not.toBe(repo);
    expect(cwd.endsWith(join("wt-repo", "iso-tree"))).toBe(true);
  });

  it("the CLI shows progress and ends with the result table", async () => {
    const file = await swarmFile("progress", [
      { id: "one", model: "role:worker", prompt: "hi" },
      { id: "two", model: "role:worker", needs: ["one"], prompt: "${{ steps.one.output }}!" },
    ]);
    const r = await cli(["run-swarm", file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/one: running \(ses_\S+\)\s+\[waiting \d · running \d · done \d\]/);
    expect(r.stdout).toMatch(/two: succeeded\s+\[waiting 0 · running 0 · done 2\]/);
    expect(r.stdout).toMatch(/STEP\s+STATE\s+SESSION\s+TIME\s+OUTPUT \/ REASON/);
    expect(r.stdout).toMatch(/two\s+succeeded\s+ses_\S+\s+\S+\s+echo: echo: hi!/);
    expect(r.stdout).toMatch(/run run_\S+ succeeded/);
  });

  it("the CLI follows the run through /events: it reads the record when the run changed, not every 200 ms", async () => {
    const file = await swarmFile("followed", [
      { id: "first", model: "role:worker", prompt: "quick" },
      { id: "long", model: "x", adapter: "steady", needs: ["first"], prompt: "go" },
    ]);
    const proxy = await countingProxy(fx.daemon.baseUrl);
    try {
      // The CLI finds the daemon through runtime.json: a home whose runtime.json points at the proxy.
      const viaProxy = join(fx.home, "via-proxy");
      await mkdir(viaProxy, { recursive: true });
      const info = JSON.parse(await readFile(join(fx.home, "runtime.json"), "utf8"));
      await writeFile(join(viaProxy, "runtime.json"), JSON.stringify({ ...info, bind: "127.0.0.1", port: proxy.port }));
      const t0 = Date.now();
      const r = await runCli(["run-swarm", file], { home: viaProxy, cwd: join(fx.home, "work") });
      const ms = Date.now() - t0;
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/long: running \(ses_\S+\)\s+\[waiting 0 · running 1 · done 1\]/);
      expect(r.stdout).toMatch(/long: succeeded\s+\[waiting 0 · running 0 · done 2\]/);
      expect(proxy.count("GET /events")).toBe(1);
      const reads = proxy.count(/^GET \/swarm\/runs\/run_/);
      // The long step alone takes ~3 s: a 200 ms poll would read the record over 15 times.
      expect(ms).toBeGreaterThan(3_000);
      expect(reads).toBeLessThanOrEqual(10);
    } finally {
      await proxy.close();
    }
  });

  it("a failing step skips its dependents with the reason; the others go on; exit 1", async () => {
    const file = await swarmFile("failing", [
      { id: "boom", model: "x", adapter: "crash", prompt: "x" },
      { id: "after", model: "x", adapter: "echo", needs: ["boom"], prompt: "never" },
      { id: "later", model: "x", adapter: "echo", needs: ["after"], prompt: "never either" },
      { id: "apart", model: "x", adapter: "echo", prompt: "still runs" },
    ]);
    const r = await cli(["run-swarm", file, "--json"]);
    expect(r.code).toBe(1);
    const { run } = JSON.parse(r.stdout);
    expect(run.state).toBe("failed");
    expect(run.steps.boom).toMatchObject({ state: "failed" });
    expect(run.steps.boom.error).toMatch(/exited|simulated provider failure/);
    expect(run.steps.after).toEqual({ state: "skipped", reason: "needs boom, which failed" });
    expect(run.steps.later).toEqual({ state: "skipped", reason: "needs after, which was skipped" });
    expect(run.steps.apart).toMatchObject({ state: "succeeded", output: "echo: still runs" });
  });

  it("cancel through the route stops the run's sessions and cancels what has not started", async () => {
    const file = await swarmFile("cancel", [
      { id: "long", model: "x", adapter: "slow", prompt: "go" },
      { id: "next", model: "x", adapter: "echo", needs: ["long"], prompt: "never" },
    ]);
    const swarm = JSON.parse(await readFile(file, "utf8"));
    const res = await fx.daemon.fetch("/swarm/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ swarm, baseDir: join(fx.home, "work") }),
    });
    expect(res.status).toBe(201);
    const { run } = (await res.json()) as { run: { runId: string } };
    let sessionId = "";
    await until(async () => {
      const got = (await (await fx.daemon.fetch(`/swarm/runs/${run.runId}`)).json()) as {
        run: { steps: Record<string, { sessionId?: string }> };
      };
      sessionId = got.run.steps.long!.sessionId ?? "";
      return sessionId !== "";
    }, "the long step's session");
    await until(async () => {
      const d = (await (await fx.daemon.fetch(`/sessions/${sessionId}`)).json()) as { descriptor: { state: string } };
      return d.descriptor.state === "busy";
    }, "the long step's turn");
    const cancelled = await fx.daemon.fetch(`/swarm/runs/${run.runId}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    const final = ((await cancelled.json()) as { run: Record<string, any> }).run;
    expect(final.state).toBe("cancelled");
    expect(final.steps.long).toMatchObject({ state: "cancelled", sessionId, reason: "the run was cancelled" });
    expect(final.steps.next).toMatchObject({ state: "cancelled" });
    const d = (await (await fx.daemon.fetch(`/sessions/${sessionId}`)).json()) as { descriptor: { state: string } };
    expect(d.descriptor.state).toBe("ended");
    const again = await fx.daemon.fetch(`/swarm/runs/${run.runId}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
  });

  it("Ctrl-C on svc run-swarm cancels the run and exits 130", async () => {
    const file = await swarmFile("sigint", [{ id: "long", model: "x", adapter: "slow", prompt: "go" }]);
    const { spawn } = await import("node:child_process");
    const { CLI_PATH } = await import("../support/paths.js");
    const { childEnv } = await import("../support/cli.js");
    const child = spawn(process.execPath, [CLI_PATH, "run-swarm", file], {
      env: childEnv(fx.home),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    await until(() => /long: running \(ses_/.test(out), "the step running");
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(out).toContain("cancelling run");
    expect(out).toMatch(/long\s+cancelled/);
  });

  it("the MCP tools run, list, show and cancel a swarm the same way: swarm_run (dryRun and wait), swarm_runs, swarm_cancel", async () => {
    const client = new Client({ name: "svc-test", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
    const swarm = {
      schema: "svc/swarm/v1",
      name: "via-mcp",
      steps: [{ id: "a", model: "role:worker", prompt: "over mcp" }],
    };
    const baseDir = join(fx.home, "work");
    const dry = await client.callTool({ name: "swarm_run", arguments: { swarm, baseDir, dryRun: true } });
    expect(dry.isError).toBeFalsy();
    expect((dry.structuredContent as any).run).toBeUndefined();
    expect((dry.structuredContent as any).plan.steps[0]).toMatchObject({
      model: { id: "fx-echo", source: "config" },
      adapter: { slug: "echo" },
    });
    const done = await client.callTool({ name: "swarm_run", arguments: { swarm, baseDir, wait: true } });
    const run = (done.structuredContent as any).run;
    expect(run).toMatchObject({ state: "succeeded", steps: { a: { state: "succeeded", output: "echo: over mcp" } } });
    const listed = await client.callTool({ name: "swarm_runs", arguments: {} });
    expect((listed.structuredContent as any).runs[0]).toMatchObject({
      runId: run.runId,
      name: "via-mcp",
      state: "succeeded",
    });
    const shown = await client.callTool({ name: "swarm_runs", arguments: { runId: run.runId } });
    expect((shown.structuredContent as any).run.steps.a.output).toBe("echo: over mcp");
    const bad = await client.callTool({
      name: "swarm_run",
      arguments: { swarm: { schema: "svc/swarm/v1", steps: [{ id: "a", prompt: "p" }] }, baseDir },
    });
    expect(bad.isError).toBe(true);
    expect((bad.content as Array<{ text: string }>)[0]!.text).toContain("steps[a].model");
    const long = await client.callTool({
      name: "swarm_run",
      arguments: {
        swarm: { schema: "svc/swarm/v1", steps: [{ id: "long", model: "x", adapter: "slow", prompt: "go" }] },
        baseDir,
      },
    });
    const longId = (long.structuredContent as any).run.runId as string;
    await until(
      async () =>
        ((await client.callTool({ name: "swarm_runs", arguments: { runId: longId } })).structuredContent as any).run
          .steps.long.sessionId !== undefined,
      "the long step's session",
    );
    const cancelled = await client.callTool({ name: "swarm_cancel", arguments: { runId: longId } });
    expect((cancelled.structuredContent as any).run).toMatchObject({
      state: "cancelled",
      steps: { long: { state: "cancelled" } },
    });
    await client.close();
  });

  it("bad input on the route: a 400 naming the step and the field, unknown fields refused; unknown runs 404", async () => {
    const post = (body: unknown) =>
      fx.daemon.fetch("/swarm/runs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const baseDir = join(fx.home, "work");
    let res = await post({
      swarm: { schema: "svc/swarm/v1", steps: [{ id: "build", model: "m", prompt: "" }] },
      baseDir,
    });
    expect(res.status).toBe(400);
    let err = ((await res.json()) as { error: { code: string; message: string; details: Array<{ path: string }> } })
      .error;
    expect(err.code).toBe("invalid_input");
    expect(err.message).toContain("steps[build].prompt");
    expect(err.details[0]!.path).toContain("steps[build].prompt");
    res = await post({
      swarm: { schema: "svc/swarm/v1", steps: [{ id: "a", model: "m", prompt: "p" }] },
      baseDir,
      concurency: 2,
    });
    expect(res.status).toBe(400);
    res = await post({
      swarm: { schema: "svc/swarm/v1", steps: [{ id: "a", model: "m", prompt: "p", needs: ["a"] }] },
      baseDir,
    });
    err = ((await res.json()) as { error: typeof err }).error;
    expect(err.message).toBe("steps[a].needs: a step cannot need itself");
    expect((await fx.daemon.fetch("/swarm/runs/not-a-run")).status).toBe(400);
    expect((await fx.daemon.fetch("/swarm/runs/run_01ARZ3NDEKTSV4RRFFQ69G5FAV")).status).toBe(404);
  });

  it("a daemon killed mid-run leaves a complete record; the next daemon life shows the run interrupted", async () => {
    const file = await swarmFile("killed", [
      { id: "quick", model: "role:worker", prompt: "done first" },
      { id: "long", model: "x", adapter: "slow", needs: ["quick"], prompt: "go" },
    ]);
    const swarm = JSON.parse(await readFile(file, "utf8"));
    const res = await fx.daemon.fetch("/swarm/runs", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ swarm, baseDir: join(fx.home, "work") }),
    });
    const { run } = (await res.json()) as { run: { runId: string } };
    const recordPath = join(fx.home, "runs", run.runId, "run.json");
    await until(
      async () => JSON.parse(await readFile(recordPath, "utf8")).steps.long.sessionId !== undefined,
      "the long step's session on disk",
    );
    const longSession = JSON.parse(await readFile(recordPath, "utf8")).steps.long.sessionId as string;
    const transcript = join(fx.home, "sessions", longSession, "events.jsonl");
    await until(
      async () => (await readFile(transcript, "utf8").catch(() => "")).includes('"session.started"'),
      "the long step's agent started",
    );
    const agentPid = (await readFile(transcript, "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l))
      .find((l) => l.type === "session.started").data.pid as number;
    const alive = () => {
      try {
        process.kill(agentPid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await fx.daemon.kill9();
    const onDisk = JSON.parse(await readFile(recordPath, "utf8"));
    expect(onDisk).toMatchObject({
      state: "running",
      steps: { quick: { state: "succeeded", output: "echo: done first" }, long: { state: "running" } },
    });
    const offline = await cli(["run-swarm", "ls", "--json"]);
    expect(JSON.parse(offline.stdout).runs.find((r: { runId: string }) => r.runId === run.runId).state).toBe(
      "interrupted",
    );
    await fx.start();
    const shown = await cli(["run-swarm", "show", run.runId, "--json"]);
    expect(JSON.parse(shown.stdout).run).toMatchObject({
      state: "interrupted",
      steps: { quick: { state: "succeeded" } },
    });
    try {
      // The next daemon life ends the step's agent it left behind (sessions' orphan sweep).
      await until(async () => !alive(), "the orphaned agent ended by the next daemon");
    } finally {
      if (alive()) process.kill(agentPid, "SIGKILL");
    }
  });
});

/** An HTTP proxy in front of the daemon that counts requests by `METHOD /path` (streams pass through). */
async function countingProxy(
  target: string,
): Promise<{ port: number; count(match: string | RegExp): number; close(): Promise<void> }> {
  const seen: string[] = [];
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    res.on("close", () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    count: (m) => seen.filter((s) => (typeof m === "string" ? s === m : m.test(s))).length,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
