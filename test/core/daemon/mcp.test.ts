import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { startDaemon, type RunningDaemon } from "../../../core/daemon/daemon.js";
import { mcpModule } from "../../../core/daemon/mcp-module.js";
import type { DaemonModule } from "../../../core/daemon/module.js";
import { SvcError } from "../../../core/errors.js";
import { createMemoryLogger } from "../../../core/runtime/logger.js";
import { TOOLS, resolve } from "../../../core/tokens.js";
import { makeTempHome } from "../../support/cli.js";

const STABLE = "stable-token-for-mcp-tests-0123456789";

/** Test tools registered the way other modules do: ToolDefs in the TOOLS table. */
const testTools: DaemonModule = {
  name: "test-tools",
  async start(c) {
    const tools = resolve(c, TOOLS);
    tools.add({
      name: "echo",
      description: "Echoes its input and the caller's principal",
      inputSchema: { text: z.string().min(1), times: z.number().int().positive().optional() },
      readOnly: true,
      handler: (input, ctx) => ({ echoed: input.text.repeat(input.times ?? 1), principal: ctx.principal }),
    });
    tools.add({
      name: "list_things",
      description: "Returns an array",
      inputSchema: {},
      readOnly: true,
      handler: () => [1, 2, 3],
    });
    tools.add({
      name: "fail",
      description: "Always refuses with an SvcError",
      inputSchema: { what: z.string() },
      handler: (input) => {
        throw new SvcError("not_found", `no thing named ${input.what}`, { details: { what: input.what } });
      },
    });
    tools.add({
      name: "crash",
      description: "Throws something that is not an SvcError, quoting a path",
      inputSchema: {},
      handler: () => {
        throw new Error("ENOENT: no such file, open '/home/someone/.svc/private-thing'");
      },
    });
  },
};

async function connect(base: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "svc-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers } }));
  return client;
}

describe("/mcp (stateless Streamable HTTP over the TOOLS table)", () => {
  let home: Awaited<ReturnType<typeof makeTempHome>>;
  let daemon: RunningDaemon;
  let base: string;

  const logger = createMemoryLogger();
  beforeAll(async () => {
    home = await makeTempHome();
    daemon = await startDaemon({
      home: home.home,
      env: {},
      flags: { port: 0, authToken: STABLE },
      logger,
      modules: [testTools, mcpModule],
    });
    base = `http://127.0.0.1:${daemon.info.port}`;
  });
  afterAll(async () => {
    await daemon?.stop();
    await home?.cleanup();
  });

  it("lists the table's tools with their schemas and read-only annotations", async () => {
    const client = await connect(base);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["crash", "echo", "fail", "list_things"]);
    const echo = tools.find((t) => t.name === "echo")!;
    expect(echo.description).toContain("Echoes");
    expect(echo.annotations?.readOnlyHint).toBe(true);
    expect(echo.inputSchema.properties).toHaveProperty("text");
    expect(echo.inputSchema.required).toEqual(["text"]);
    expect(tools.find((t) => t.name === "fail")!.annotations?.readOnlyHint).toBe(false);
    await client.close();
  });

  it("tells both eras what svc is for, and does not advertise tools.listChanged (it never sends that notification)", async () => {
    const legacy = await connect(base);
    const modern = new ModernClient(
      { name: "svc-test", version: "0.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await modern.connect(new ModernTransport(new URL("/mcp", base)));
    expect(modern.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    for (const client of [legacy, modern]) {
      const instructions = client.getInstructions() ?? "";
      for (const topic of [/sentinel/i, /session/i, /webhook/i, /events extension/i])
        expect(instructions).toMatch(topic);
      expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: false });
      expect((await client.listTools()).tools).toHaveLength(4);
      await client.close();
    }
  });

  it("calls a tool: JSON text content plus structuredContent for objects, text only for arrays", async () => {
    const client = await connect(base);
    const out = await client.callTool({ name: "echo", arguments: { text: "ab", times: 2 } });
    expect(out.isError).toBeFalsy();
    expect(out.structuredContent).toEqual({ echoed: "abab", principal: "loopback" });
    expect(JSON.parse((out.content as Array<{ text: string }>)[0]!.text)).toEqual({
      echoed: "abab",
      principal: "loopback",
    });
    const arr = await client.callTool({ name: "list_things", arguments: {} });
    expect(arr.structuredContent).toBeUndefined();
    expect(JSON.parse((arr.content as Array<{ text: string }>)[0]!.text)).toEqual([1, 2, 3]);
    await client.close();
  });

  it("rejects invalid input with a tool error naming the field, without running the handler", async () => {
    const client = await connect(base);
    const out = await client.callTool({ name: "echo", arguments: { text: "", times: -1 } });
    expect(out.isError).toBe(true);
    const text = (out.content as Array<{ text: string }>)[0]!.text;
    expect(text).toMatch(/Input validation error/);
    expect(text).toMatch(/text/);
    expect(text).toMatch(/times/);
    await client.close();
  });

  it("returns an SvcError as a tool error with its code, message and details", async () => {
    const client = await connect(base);
    const out = await client.callTool({ name: "fail", arguments: { what: "widget" } });
    expect(out.isError).toBe(true);
    expect(JSON.parse((out.content as Array<{ text: string }>)[0]!.text)).toEqual({
      error: { code: "not_found", message: "no thing named widget", details: { what: "widget" } },
    });
    // No structuredContent on an error: clients check that against the output schema of a success.
    expect(out.structuredContent).toBeUndefined();
    await client.close();
  });

  it("anything else a tool throws is a generic internal error, as on REST; the log has the cause", async () => {
    const client = await connect(base);
    const out = await client.callTool({ name: "crash", arguments: {} });
    expect(out.isError).toBe(true);
    const text = (out.content as Array<{ text: string }>)[0]!.text;
    expect(JSON.parse(text).error).toMatchObject({
      code: "internal",
      message: "internal error; the daemon log has the cause",
    });
    expect(text).not.toContain("private-thing");
    expect(
      logger.lines.some((l) => l.includes("tool failed") && l.includes("crash") && l.includes("private-thing")),
    ).toBe(true);
    await client.close();
  });

  it("an unknown tool is a JSON-RPC invalid-params error naming it (the MCP specification's protocol error), not a crash", async () => {
    const client = await connect(base);
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringMatching(/nope not found/),
    });
    expect((await client.listTools()).tools).toHaveLength(4);
    await client.close();
  });

  it("passes the token principal to handlers", async () => {
    const client = await connect(base, { authorization: `Bearer ${STABLE}` });
    const out = await client.callTool({ name: "echo", arguments: { text: "x" } });
    expect((out.structuredContent as { principal: string }).principal).toBe("token:stable");
    await client.close();
  });

  it("auth: a non-loopback caller (X-Forwarded-For) needs the token; a wrong one is refused, the right one accepted", async () => {
    const forwarded = { "x-forwarded-for": "203.0.113.7" };
    await expect(connect(base, forwarded)).rejects.toThrow(/401|unauthorized|bearer/i);
    await expect(connect(base, { ...forwarded, authorization: "Bearer wrong-token" })).rejects.toThrow(
      /401|unauthorized|bearer/i,
    );
    const client = await connect(base, { ...forwarded, authorization: `Bearer ${STABLE}` });
    expect((await client.listTools()).tools).toHaveLength(4);
    await client.close();
  });

  it("auth: a wrong token is refused even from loopback", async () => {
    await expect(connect(base, { authorization: "Bearer wrong-token" })).rejects.toThrow(/401|unauthorized|bearer/i);
  });

  it("answers a body that is not JSON with a JSON-RPC parse error, and GET with 405", async () => {
    const bad = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const get = await fetch(`${base}/mcp`, { headers: { accept: "text/event-stream" } });
    expect(get.status).toBe(405);
  });

  it("refuses a browser Origin that is not allowed", async () => {
    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        origin: "https://evil.example",
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(res.status).toBe(403);
  });
});
