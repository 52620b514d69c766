import { join } from "node:path";
import { sessionSentinel } from "../support/agentpush.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { runCli, useDaemonProcess } from "../support/cli.js";
import { FIXTURE_AGENTS } from "../core/sessions/harness.js";
import { until } from "../support/until.js";

const body = async (r: Response | Promise<Response>): Promise<Record<string, any>> =>
  (await (await r).json()) as Record<string, any>;

const json = (body: unknown) => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

const fx = useDaemonProcess({ prefix: "svc-e2e-sentinel-session-", config: { acpAgents: FIXTURE_AGENTS } });

describe("a sentinel with a session target, end to end", () => {
  it("delivers a pushed event into an ACP session as a prompt, and parks events once the session has ended", async () => {
    const { descriptor } = await body(fx.daemon.fetch("/sessions", json({ adapter: "echo", cwd: fx.home })));
    const created = await fx.daemon.fetch("/sentinels", json(sessionSentinel(descriptor.id, "ci:acme/api*")));
    expect(created.status).toBe(201);
    const sentinel = await body(created);
    const push = await fx.daemon.fetch(
      "/providers/agentpush/events",
      json({
        id: "build-1",
        type: "ci.build.failed",
        subjects: ["ci:acme/api", "ci:acme/api#7"],
        data: { job: "test" },
      }),
    );
    expect(push.status).toBe(200);
    const recap = await until(async () => {
      const r = await body(fx.daemon.fetch(`/sessions/${descriptor.id}/recap`));
      return r.lastResult ? r : undefined;
    }, "the event's turn");
    expect(recap.lastResult.text).toContain(
      `echo: [svc sentinel ${sentinel.id} "ci"] ci.build.failed on ci:acme/api#7 (event build-1)`,
    );

    await fx.daemon.fetch(`/sessions/${descriptor.id}/stop`, { method: "POST" });
    expect(
      (
        await fx.daemon.fetch(
          "/providers/agentpush/events",
          json({ id: "build-2", type: "ci.build.failed", subjects: ["ci:acme/api"] }),
        )
      ).status,
    ).toBe(200);
    const status = await body(fx.daemon.fetch(`/sentinels/${sentinel.id}`));
    expect(status.target).toMatchObject({
      sessionId: descriptor.id,
      session: "ended",
      parked: 1,
      parkedEvents: [{ eventId: "build-2" }],
    });
    const cli = await runCli(["sentinel", "status", sentinel.id, "--json"], { home: fx.home });
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout).target).toMatchObject({ parked: 1 });
  });

  it("serves the session tools over MCP", async () => {
    const client = new Client({ name: "sessions-e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${fx.daemon.baseUrl}/mcp`)));
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      expect(names).toEqual(
        expect.arrayContaining([
          "start_agent_session",
          "session_list",
          "session_recap",
          "agent_prompt",
          "message_send",
          "message_reply",
          "message_parent",
        ]),
      );
      const call = async (name: string, args: Record<string, unknown>) => {
        const r = (await client.callTool({ name, arguments: args })) as {
          content: Array<{ type: string; text: string }>;
          isError?: boolean;
          structuredContent?: unknown;
        };
        if (r.isError) throw new Error(r.content.map((c) => c.text).join(""));
        return r.structuredContent ?? JSON.parse(r.content[0]!.text);
      };
      const started = (await call("start_agent_session", { adapter: "echo", cwd: fx.home, label: "via-mcp" })) as {
        descriptor: { id: string; eventsPath: string };
      };
      expect(started.descriptor.eventsPath).toContain(join(fx.home, "sessions", started.descriptor.id));
      const child = (await call("start_agent_session", {
        adapter: "echo",
        cwd: fx.home,
        parentSessionId: started.descriptor.id,
      })) as { descriptor: { id: string } };
      await call("agent_prompt", { sessionId: started.descriptor.id, text: "over mcp" });
      await call("message_parent", { fromSessionId: child.descriptor.id, text: "child reporting" });
      const recap = await until(async () => {
        const r = (await call("session_recap", { sessionId: started.descriptor.id })) as {
          lastResult?: { text: string };
          session: { turns: number };
        };
        return r.session.turns >= 2 ? r : undefined;
      }, "two turns");
      expect(recap.lastResult?.text).toBe("echo: child reporting");
      const list = (await call("session_list", {})) as {
        sessions: Array<{ id: string; label?: string; pendingPrompts: unknown[] }>;
      };
      expect(list.sessions.find((s) => s.id === started.descriptor.id)).toMatchObject({
        label: "via-mcp",
        pendingPrompts: [],
      });
      await expect(call("message_parent", { fromSessionId: started.descriptor.id, text: "no parent" })).rejects.toThrow(
        /has no parent/,
      );
    } finally {
      await client.close();
    }
  });
});
