import { describe, expect, it } from "vitest";
import { useDaemonProcess } from "../support/cli.js";
import { eventStream, fakeGhEnv, mcpClient } from "./github-helpers.js";

describe("e2e: local-gh replays recorded GitHub API responses (fake gh on PATH) into sentinels made over MCP", () => {
  let gh: Awaited<ReturnType<typeof fakeGhEnv>>;
  const fx = useDaemonProcess({
    setup: async () => {
      gh = await fakeGhEnv("pr-42");
      return { env: gh.env };
    },
  });

  it("lists the sentinel tools and reports local-gh ready (gh on PATH and authenticated)", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    const names = (await mcp.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "sentinel_watch",
        "sentinel_list",
        "sentinel_unwatch",
        "sentinel_poll_now",
        "list_sentinel_adapters",
        "setup_sentinel_provider",
      ]),
    );
    const { providers } = await mcp.json("list_sentinel_adapters");
    const localGh = providers.find((p: { kind: string }) => p.kind === "local-gh");
    expect(localGh.readiness).toMatchObject({ ready: true, gh: { installed: true, authenticated: true } });
    await mcp.close();
  });

  it("matches the right sentinels, ends the pull request's sentinel when it merges, and never delivers twice", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    const stream = await eventStream(fx.daemon.baseUrl);
    const pr = await mcp.json("sentinel_watch", {
      prUrl: "https://github.com/Acme/API/pull/42",
      sessionId: "ses_e2e_pr",
    });
    expect(pr.spec).toMatchObject({
      match: [{ subject: "github:acme/api#42" }],
      provider: "local-gh",
      until: { kind: "subject_terminal" },
    });
    const repo = await mcp.json("sentinel_watch", {
      subject: "github:acme/api",
      types: ["github.issue_comment.*"],
      until: { kind: "never" },
      sessionId: "ses_e2e_repo",
    });
    const other = await mcp.json("sentinel_watch", {
      subject: "github:acme/other#1",
      until: { kind: "never" },
      sessionId: "ses_e2e_other",
    });

    // 1st poll: baseline (recorded history is older than the sentinels); 2nd: 304s; 3rd: new comment, merge, a finished check.
    for (let i = 0; i < 3; i++)
      expect(await mcp.json("sentinel_poll_now")).toMatchObject({ polled: expect.arrayContaining(["local-gh"]) });
    await stream.waitFor(() => stream.of("sentinel:matched").length >= 4, "4 matched events");
    const matched = stream
      .of("sentinel:matched")
      .map((e) => `${e.data.sentinelId} ${e.data.type}`)
      .sort();
    expect(matched).toEqual(
      [
        `${pr.id} github.check_run.completed`,
        `${pr.id} github.issue_comment.created`,
        `${pr.id} github.pull_request.closed`,
        `${repo.id} github.issue_comment.created`,
      ].sort(),
    );
    await stream.waitFor(() => stream.of("sentinel:ended").length === 1, "the PR sentinel to end");
    expect(stream.of("sentinel:ended")[0]!.data).toMatchObject({ sentinelId: pr.id, reason: "subject_terminal" });

    const calls = (await gh.calls()).filter((c) => c.cmd === "api");
    expect(calls.some((c) => c.headers["if-none-match"] === 'W/"ev-1"')).toBe(true);
    expect(calls.some((c) => c.path === "repos/acme/other/pulls/1")).toBe(true);

    await mcp.json("sentinel_poll_now");
    await mcp.json("sentinel_poll_now");
    await new Promise((r) => setTimeout(r, 100));
    expect(stream.of("sentinel:matched")).toHaveLength(4);

    const { sentinels } = await mcp.json("sentinel_list");
    const byId = new Map(sentinels.map((s: { id: string }) => [s.id, s]));
    expect(byId.get(pr.id)).toMatchObject({ status: "expired", endedReason: "subject_terminal", deliveredCount: 3 });
    expect(byId.get(repo.id)).toMatchObject({ status: "active", deliveredCount: 1 });
    expect(byId.get(other.id)).toMatchObject({ status: "active", deliveredCount: 0 });

    expect(await mcp.json("sentinel_unwatch", { id: repo.id })).toEqual({ removed: repo.id });
    await expect(mcp.json("sentinel_unwatch", { id: repo.id })).rejects.toMatchObject({
      result: { error: { code: "not_found" } },
    });
    await stream.close();
    await mcp.close();
  });

  it("sentinel_watch validates its input: one of subject or prUrl, a session, known providers", async () => {
    const mcp = await mcpClient(fx.daemon.baseUrl, fx.daemon.token);
    await expect(
      mcp.json("sentinel_watch", { subject: "github:a/b", prUrl: "https://github.com/a/b/pull/1", sessionId: "s" }),
    ).rejects.toMatchObject({
      result: { error: { code: "invalid_input" } },
    });
    await expect(
      mcp.json("sentinel_watch", { prUrl: "https://gitlab.com/a/b/pull/1", sessionId: "s" }),
    ).rejects.toMatchObject({ result: { error: { code: "invalid_input" } } });
    const missing = await mcp.callTool({ name: "sentinel_watch", arguments: { subject: "github:a/b" } });
    expect(missing.isError).toBe(true);
    expect(JSON.stringify(missing.content)).toMatch(/sessionId/);
    await expect(
      mcp.json("sentinel_watch", { subject: "github:a/b", provider: "nope", sessionId: "s" }),
    ).rejects.toMatchObject({ result: { error: { code: "invalid_input" } } });
    await mcp.close();
  });
});
