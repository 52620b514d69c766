import { existsSync } from "node:fs";
import { rm, writeFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { beforeAll, describe, expect, it } from "vitest";
import { afterConfigReload, runCli, useDaemonProcess } from "../support/cli.js";
import { CLI_PATH } from "../support/paths.js";
import { AGENTS, makeRepo, sh, tempDir } from "../core/workspaces/support.js";

const fx = useDaemonProcess({ prefix: "svc-e2e-ws-", config: { acpAgents: AGENTS } });
let repo = "";
beforeAll(async () => {
  repo = await makeRepo(await tempDir());
});

const cli = async (args: string[], cwd = repo) => {
  const r = await runCli(args, { home: fx.home, cwd });
  return { ...r, json: () => JSON.parse(r.stdout) };
};

async function start(slug: string): Promise<{ id: string; path: string }> {
  const r = await cli(["sessions", "start", "--adapter", "echo", "--worktree", slug, "--json"]);
  expect(r.stderr).toBe("");
  const d = r.json().descriptor;
  return { id: d.id, path: d.worktree.path };
}

async function prompt(id: string, text: string): Promise<string> {
  const res = await fx.daemon.fetch(`/sessions/${id}/prompt`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text, wait: true }),
  });
  return ((await res.json()) as { result: { text: string } }).result.text;
}

describe("svc worktree ls|rm|archive|gc on dirty, clean, live and orphaned trees", () => {
  // About thirty CLI processes and git calls in a row: at load 25 that took over 120 s, so its guard is wider.
  it("walks every state through the CLI", async () => {
    const live = await start("live-one");
    const clean = await start("clean-one");
    const dirty = await start("dirty-one");
    const gone = await start("gone-one");
    for (const s of [clean, dirty, gone]) expect((await cli(["sessions", "stop", s.id])).code).toBe(0);
    await writeFile(join(dirty.path, "work.txt"), "unsaved work\n");
    await rm(gone.path, { recursive: true, force: true });
    const stray = join(fx.home, "worktrees", "app", "stray");
    await mkdir(stray, { recursive: true });

    const ls = await cli(["worktree", "ls", "--json"]);
    expect(ls.code).toBe(0);
    const bySlug = Object.fromEntries(ls.json().worktrees.map((w: { slug: string }) => [w.slug, w]));
    expect(bySlug["live-one"]).toMatchObject({
      state: "live",
      session: live.id,
      dirty: false,
      branch: "svc/live-one",
      repo,
      repoName: "app",
    });
    expect(bySlug["clean-one"]).toMatchObject({ state: "idle", session: clean.id, dirty: false });
    expect(bySlug["dirty-one"]).toMatchObject({ state: "idle", dirty: true });
    expect(bySlug["dirty-one"].sizeBytes).toBeGreaterThan(0);
    expect(bySlug["gone-one"]).toMatchObject({ state: "missing" });
    expect(bySlug["stray"]).toMatchObject({
      state: "foreign",
      recorded: false,
      owned: false,
      notOwned: "svc has no record of it",
    });
    const table = await cli(["worktree", "ls"]);
    expect(table.stdout).toMatch(/REPO\s+SLUG\s+BRANCH\s+SESSION\s+STATE\s+CHANGES\s+AGE\s+SIZE\s+PATH/);
    expect(table.stdout).toMatch(/app\s+dirty-one\s+svc\/dirty-one\s+ses_\S+\s+idle\s+dirty/);

    const refusedDirty = await cli(["worktree", "rm", "dirty-one"]);
    expect(refusedDirty.code).toBe(1);
    expect(refusedDirty.stderr).toMatch(
      /uncommitted changes; `svc worktree archive dirty-one` keeps them, --force discards them/,
    );
    const refusedLive = await cli(["worktree", "rm", "live-one", "--json"]);
    expect(refusedLive.code).toBe(1);
    expect(refusedLive.json().error).toMatchObject({
      code: "conflict",
      message: expect.stringContaining(`live session ${live.id}`),
    });

    const rmClean = await cli(["worktree", "rm", "clean-one", "--json"]);
    expect(rmClean.json().removed).toMatchObject({ path: clean.path, branch: "svc/clean-one", branchDeleted: true });
    expect(existsSync(clean.path)).toBe(false);
    expect(sh(repo, "branch", "--list", "svc/clean-one").trim()).toBe("");

    const archived = await cli(["worktree", "archive", "dirty-one", "--json"]);
    expect(archived.code).toBe(0);
    const a = archived.json().archived;
    expect(a).toMatchObject({
      path: dirty.path,
      branch: "svc/dirty-one",
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
    expect(existsSync(dirty.path)).toBe(false);
    expect(sh(repo, "show", "svc/dirty-one:work.txt")).toBe("unsaved work\n");
    // Back: the same slug checks the branch out again, work included.
    const back = await start("dirty-one");
    expect(back.path).toBe(dirty.path);
    expect(existsSync(join(back.path, "work.txt"))).toBe(true);
    expect((await cli(["sessions", "stop", back.id])).code).toBe(0);

    const dry = await cli(["worktree", "gc", "--older-than", "0m", "--dry-run", "--json"]);
    const planned = dry
      .json()
      .actions.map((x: { slug: string; action: string }) => `${x.slug}:${x.action}`)
      .sort();
    expect(planned).toEqual(["dirty-one:removed", "gone-one:record-dropped", "live-one:left", "stray:left"]);
    const dryText = (await cli(["worktree", "gc", "--older-than", "0m", "--dry-run"])).stdout;
    expect(dryText).toContain(`would leave: ${stray} (foreign; not svc's: svc has no record of it)`);
    expect(dryText).toMatch(/^dry run: would remove 1, drop 1 record\(s\), leave 2$/m);
    const gc = await cli(["worktree", "gc", "--older-than", "0m"]);
    expect(gc.code).toBe(0);
    expect(gc.stdout).toContain(`removed: ${back.path} (idle; clean; nothing in it changed for 0m)`);
    expect(gc.stdout).toContain(`left: ${stray} (foreign; not svc's: svc has no record of it)`);
    expect(gc.stdout).toContain(`dropped git's entries for ${gone.path}`);
    expect(existsSync(stray)).toBe(true);
    const after = (await cli(["worktree", "ls", "--json"]))
      .json()
      .worktrees.map((w: { slug: string; state: string }) => `${w.slug}:${w.state}`);
    expect(after).toEqual(["live-one:live", "stray:foreign"]);
    expect(sh(repo, "worktree", "list", "--porcelain")).not.toContain("gone-one");
    // The archived branch checked out again was not svc's to delete: its work is still there.
    expect(sh(repo, "show", "svc/dirty-one:work.txt")).toBe("unsaved work\n");

    expect((await cli(["worktree", "rm", "live-one", "--force"])).code).toBe(0);
    expect((await cli(["worktree", "gc", "--older-than", "7x"])).stderr).toMatch(/--older-than "7x" is invalid/);
  }, 360_000);
});

describe("spawn lineage through the CLI and MCP, from inside a session", () => {
  it("`svc sessions start` run by an agent nests the new session under it (its SVC_SESSION_TOKEN); --no-attach opts out", async () => {
    const parent = (await cli(["sessions", "start", "--adapter", "shell", "--json"])).json().descriptor;
    const out = JSON.parse(
      await prompt(parent.id, `${process.execPath} ${CLI_PATH} sessions start --adapter echo --json`),
    );
    expect(out.code).toBe(0);
    const child = JSON.parse(out.stdout).descriptor;
    expect(child).toMatchObject({ parentId: parent.id, depth: 1 });
    const noAttach = JSON.parse(
      JSON.parse(
        await prompt(parent.id, `${process.execPath} ${CLI_PATH} sessions start --adapter echo --no-attach --json`),
      ).stdout,
    ).descriptor;
    expect(noAttach.parentId).toBeUndefined();
    const ls = await cli(["sessions", "ls"]);
    expect(ls.stdout).toMatch(new RegExp(`${child.id}\\s+${parent.id}\\s+echo`));
  });

  it("an MCP client presenting X-Svc-Session-Token spawns a child; a duplicate spawn is deduped", async () => {
    const parent = (await cli(["sessions", "start", "--adapter", "shell", "--json"])).json().descriptor;
    const token = JSON.parse(await prompt(parent.id, 'printf %s "$SVC_SESSION_TOKEN"')).stdout;
    expect(token).toMatch(/^svcst_[0-9a-f]{48}$/);
    const client = new Client({ name: "agent-side", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { "x-svc-session-token": token } },
      }),
    );
    const args = { adapter: "echo", cwd: repo, worktree: "mcp-child", label: "task", prompt: "go" };
    const first = (await client.callTool({ name: "start_agent_session", arguments: args })).structuredContent as {
      descriptor: { id: string; parentId?: string; worktree?: { slug: string } };
      deduped?: boolean;
    };
    expect(first.descriptor).toMatchObject({ parentId: parent.id, worktree: { slug: "mcp-child" } });
    const again = (await client.callTool({ name: "start_agent_session", arguments: args }))
      .structuredContent as typeof first;
    expect(again).toMatchObject({ deduped: true, descriptor: { id: first.descriptor.id } });
    await client.close();
    const http = await fx.daemon.fetch("/sessions", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ adapter: "echo", cwd: repo, label: "task", prompt: "go", worktree: "mcp-child" }),
    });
    // Over HTTP without the token the caller is a root spawn: another key, and the slug is in use.
    expect(http.status).toBe(409);
  });
});

describe("the provisioning queue on a real daemon", () => {
  it("svc sessions ls shows queued positions; svc config set of the cap applies without a restart", async () => {
    expect(
      (await afterConfigReload(fx.daemon, () => cli(["config", "set", "worktrees.provisionConcurrency", "1"]))).code,
    ).toBe(0);
    const gateFile = join(await tempDir(), "open");
    const queued = await makeRepo(await tempDir(), "queued", {
      ".svc/worktree.json": JSON.stringify({
        install: false,
        setup: [`while [ ! -f '${gateFile}' ]; do sleep 0.02; done`],
      }),
    });
    const ids: string[] = [];
    for (const slug of ["qa", "qb", "qc"])
      ids.push(
        (await cli(["sessions", "start", "--adapter", "echo", "--worktree", slug, "--json"], queued)).json().descriptor
          .id,
      );
    const states = async () => {
      const { sessions } = (await cli(["sessions", "ls", "--json"])).json() as {
        sessions: Array<{ id: string; provisioning?: { state: string; position?: number } }>;
      };
      return ids.map((id) => sessions.find((s) => s.id === id)!.provisioning);
    };
    const deadline = Date.now() + 60_000;
    while ((await states())[0]?.state !== "running" && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const table = (await cli(["sessions", "ls"])).stdout;
    expect(table).toMatch(new RegExp(`${ids[1]}\\s+-\\s+echo\\s+-\\s+starting \\(queued #1\\)`));
    expect(table).toMatch(new RegExp(`${ids[2]}\\s+-\\s+echo\\s+-\\s+starting \\(queued #2\\)`));
    // The same positions through the MCP tool session_list.
    const client = new Client({ name: "lister", version: "0.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl)));
    const listed = (await client.callTool({ name: "session_list", arguments: {} })).structuredContent as {
      sessions: Array<{ id: string; provisioning?: unknown }>;
    };
    await client.close();
    expect(ids.slice(1).map((id) => listed.sessions.find((x) => x.id === id)?.provisioning)).toEqual([
      { state: "queued", position: 1 },
      { state: "queued", position: 2 },
    ]);
    expect(
      (await afterConfigReload(fx.daemon, () => cli(["config", "set", "worktrees.provisionConcurrency", "2"]))).code,
    ).toBe(0);
    while ((await states())[1]?.state !== "running" && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(await states()).toEqual([
      { state: "running", phase: "setup" },
      { state: "running", phase: "setup" },
      { state: "queued", position: 1 },
    ]);
    await writeFile(gateFile, "");
    while ((await states()).some((p) => p?.state !== "done") && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    expect(await states()).toEqual([{ state: "done" }, { state: "done" }, { state: "done" }]);
  }, 90_000);
});
