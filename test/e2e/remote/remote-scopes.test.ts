/**
 * Who may start a process from beyond loopback, with a real relay, real daemons (one dialling the
 * relay's tunnel, one paired with it twice) and the real MCP SDK client: a plain tunnel request
 * and a `read` pairing may read but get 403 on `POST /sessions` and on MCP `start_agent_session`;
 * an `operate` pairing, confirmed on the daemon's side, starts one, but only under
 * `pairing.allowedRoots` (a symlink out of a root does not count); the scope can be changed while
 * the link stays up; the CLI never grants operate without a confirmation.
 */
import { mkdir, mkdtemp, realpath, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callerTokenFor } from "../../../core/remote/tunnel/caller-token.js";
import { FIXTURE_AGENTS } from "../../core/sessions/harness.js";
import { accept, offer, relayWithTap, startNode, waitConnected, waitFor, type Node } from "./helpers.js";

const HOST_TOKEN = "scopes-host-token-7e1d0c5a9b";

interface Answer {
  status: number;
  body: string;
}

describe("scopes of remote callers", { timeout: 180_000 }, () => {
  let relay: Awaited<ReturnType<typeof relayWithTap>>;
  let a: Node;
  let b: Node;
  let root: string;
  let outside: string;
  let tunnelUrl: string;
  let readId: string;
  let operateId: string;

  /** A request from b to a through pairing `id` (what `svc --remote <id>` sends). */
  const through = async (
    id: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const r = await b.daemon.fetch(`/pairings/${id}/request`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        method,
        path,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    });
    expect(r.status).toBe(200);
    return (await r.json()) as Answer;
  };
  const mcpCall = (id: string, name: string, args: Record<string, unknown>) =>
    through(id, "POST", "/mcp", {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name, arguments: args },
    }).then((r) => {
      expect(r.status).toBe(200);
      return (JSON.parse(r.body) as { result: { isError?: boolean; content: Array<{ text: string }> } }).result;
    });
  // Each start its own prompt: the same request twice would be deduplicated to the live session.
  let n = 0;
  const start = (cwd: string, extra: Record<string, unknown> = {}) => ({
    adapter: "echo",
    cwd,
    prompt: `hello ${++n}`,
    ...extra,
  });

  beforeAll(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), "svc-scope-root-")));
    outside = await realpath(await mkdtemp(join(tmpdir(), "svc-scope-outside-")));
    await mkdir(join(root, "project"));
    await symlink(outside, join(root, "escape"));
    relay = await relayWithTap({ tunnelTokens: [HOST_TOKEN] });
    a = await startNode(
      {
        pairing: { rendezvous: relay.url, allowedRoots: [root] },
        tunnel: { token: HOST_TOKEN },
        acpAgents: { echo: FIXTURE_AGENTS.echo },
      },
      ["--connect", relay.url],
    );
    b = await startNode({ pairing: { rendezvous: relay.url } });
    tunnelUrl = await waitFor("the tunnel's public URL", async () => /tunnel open: (\S+)/.exec(a.daemon.logs())?.[1]);
    readId = (await accept(b, await offer(a))).id!;
    operateId = (await accept(b, await offer(a, ["--scope", "operate", "--yes"]))).id!;
    await waitConnected(b, readId);
    await waitConnected(b, operateId);
  });
  afterAll(async () => {
    await a?.cleanup();
    await b?.cleanup();
    await relay?.close();
    await rm(root, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  it("both ends list each pairing with its scope", async () => {
    const far = JSON.parse((await a.cli(["pair", "ls", "--json"])).stdout) as {
      pairings: Array<{ id: string; scope: string }>;
    };
    expect(far.pairings.find((p) => p.id === readId)?.scope).toBe("read");
    expect(far.pairings.find((p) => p.id === operateId)?.scope).toBe("operate");
    const near = JSON.parse((await b.cli(["pair", "ls", "--json"])).stdout) as {
      pairings: Array<{ id: string; scope: string }>;
    };
    expect(near.pairings.find((p) => p.id === operateId)?.scope).toBe("operate");
  });

  it("a plain tunnel request reads, but gets 403 on POST /sessions and on MCP start_agent_session", async () => {
    const auth = { authorization: `Bearer ${callerTokenFor(HOST_TOKEN)}` };
    const list = await fetch(`${tunnelUrl}sessions`, { headers: auth });
    expect(list.status).toBe(200);
    const post = await fetch(`${tunnelUrl}sessions`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify(start(join(root, "project"))),
    });
    expect(post.status).toBe(403);
    expect(((await post.json()) as { error: { message: string } }).error.message).toMatch(
      /session\.start .*needs the operate scope; a plain tunnel request may only read: plain tunnel requests never operate/,
    );

    const client = new Client({ name: "scopes-e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${tunnelUrl}mcp`), { requestInit: { headers: auth } }),
    );
    try {
      const listed = (await client.callTool({ name: "session_list", arguments: {} })) as { isError?: boolean };
      expect(listed.isError).toBeFalsy();
      const started = (await client.callTool({
        name: "start_agent_session",
        arguments: start(join(root, "project")),
      })) as { isError?: boolean; content: Array<{ text: string }> };
      expect(started.isError).toBe(true);
      expect(started.content[0]!.text).toMatch(/forbidden.*start_agent_session needs the operate scope/s);
    } finally {
      await client.close();
    }
    expect(JSON.parse((await a.cli(["sessions", "list", "--json"])).stdout).sessions).toEqual([]);
  });

  it("a read pairing reads, but gets 403 on POST /sessions and on MCP start_agent_session", async () => {
    expect((await through(readId, "GET", "/sessions")).status).toBe(200);
    const post = await through(readId, "POST", "/sessions", start(join(root, "project")));
    expect(post.status).toBe(403);
    expect(post.body).toContain(
      `pairing ${readId} (scope read) may only read: the daemon's owner can give it the operate scope with \`svc pair scope ${readId} operate\``,
    );
    const tool = await mcpCall(readId, "start_agent_session", start(join(root, "project")));
    expect(tool.isError).toBe(true);
    expect(tool.content[0]!.text).toContain("needs the operate scope");
    const read = await mcpCall(readId, "session_list", {});
    expect(read.isError).toBeFalsy();
    // Token operations stay the owner's: a pairing offer.
    expect((await through(readId, "POST", "/pairing/offers", {})).status).toBe(401);
    expect(JSON.parse((await a.cli(["sessions", "list", "--json"])).stdout).sessions).toEqual([]);
  });

  it("an operate pairing starts a session under pairing.allowedRoots, and nowhere else", async () => {
    const body = start(join(root, "project"), { wait: true });
    const ok = await through(operateId, "POST", "/sessions", body);
    expect(ok.status, ok.body).toBe(201);
    const started = JSON.parse(ok.body) as { descriptor: { id: string; cwd: string }; result: { text: string } };
    expect(started.descriptor.cwd).toBe(join(root, "project"));
    expect(started.result.text).toBe(`echo: ${body.prompt}`);

    const tool = await mcpCall(operateId, "start_agent_session", start(join(root, "project")));
    expect(tool.isError, tool.content[0]?.text).toBeFalsy();

    for (const [body, why] of [
      [start(outside), `cwd ${outside} is not under pairing.allowedRoots (${root})`],
      [start(join(root, "escape")), `cwd ${join(root, "escape")} is not under pairing.allowedRoots`],
      [
        start(join(root, "project"), { worktree: "x", worktreeRoot: join(outside, "trees") }),
        `worktreeRoot ${join(outside, "trees")} is not under pairing.allowedRoots`,
      ],
      [{ adapter: "echo", prompt: "no cwd" }, "must give cwd: a directory under pairing.allowedRoots"],
    ] as const) {
      const r = await through(operateId, "POST", "/sessions", body);
      expect(r.status, r.body).toBe(403);
      expect(r.body).toContain(why);
    }
    const outsideTool = await mcpCall(operateId, "start_agent_session", start(outside));
    expect(outsideTool.isError).toBe(true);
    expect(outsideTool.content[0]!.text).toContain("is not under pairing.allowedRoots");
    const run = await through(operateId, "POST", "/swarm/runs", {
      swarm: {
        schema: "svc/swarm/v1",
        name: "far",
        steps: [{ id: "s", model: "m", adapter: "echo", prompt: "p", cwd: outside }],
      },
      baseDir: join(root, "project"),
    });
    expect(run.status, run.body).toBe(403);
    expect(run.body).toContain(`steps.s.cwd ${outside} is not under pairing.allowedRoots`);
    // Still read-only for what is the owner's alone: configuration.
    const cfg = await mcpCall(operateId, "config_set", { key: "defaults.agentPromptInterrupt", value: true });
    expect(cfg.isError).toBe(true);
    expect(cfg.content[0]!.text).toContain("needs the daemon's owner");
  });

  it("the owner changes a scope while the link stays up; the CLI grants operate only when confirmed", async () => {
    const unconfirmed = await a.cli(["pair", "scope", readId, "operate"]);
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.stderr).toContain("not confirmed; on a terminal svc asks, otherwise add --yes");
    const offerUnconfirmed = await a.cli(["pair", "offer", "--scope", "operate"]);
    expect(offerUnconfirmed.code).toBe(2);
    expect((await through(readId, "POST", "/sessions", start(join(root, "project")))).status).toBe(403);

    const raised = await a.cli(["pair", "scope", readId, "operate", "--yes"]);
    expect(raised.stderr).toBe("");
    expect(raised.stdout).toContain("now has the operate scope");
    expect((await through(readId, "POST", "/sessions", start(join(root, "project")))).status).toBe(201);
    expect((await a.cli(["pair", "scope", readId, "read"])).code).toBe(0);
    expect((await through(readId, "POST", "/sessions", start(join(root, "project")))).status).toBe(403);
    // The accepting end cannot raise its own scope.
    const own = await b.cli(["pair", "scope", readId, "operate", "--yes"]);
    expect(own.code).toBe(1);
    expect(own.stderr).toContain("its scope is set by the daemon that offered it");
  });
});
