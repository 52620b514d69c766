/**
 * Issue 13, "MCP": every tool the daemon serves (built-in or added later) advertises an output
 * schema and describes every input, and an argument a tool does not name is refused, as REST
 * refuses unknown fields.
 */
import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { useDaemonProcess } from "../../support/cli.js";

describe("the MCP surface of a real daemon", () => {
  const fx = useDaemonProcess({ prefix: "svc-mcp-surface-" });
  const connect = async () => {
    const client = new Client({ name: "svc-surface-test", version: "0.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { authorization: `Bearer ${fx.daemon.token}` } },
      }),
    );
    return client;
  };

  it("every tool has an outputSchema and a description on every input property", async () => {
    const client = await connect();
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(15);
    const lacking = tools.flatMap((t) => [
      ...(t.outputSchema ? [] : [`${t.name}: no outputSchema`]),
      ...Object.entries((t.inputSchema.properties ?? {}) as Record<string, { description?: string }>)
        .filter(([, p]) => !p.description)
        .map(([k]) => `${t.name}.${k}: no description`),
    ]);
    expect(lacking).toEqual([]);
    await client.close();
  });

  it("an unknown argument is refused, not ignored", async () => {
    const client = await connect();
    const out = await client.callTool({ name: "sentinel_list", arguments: { verbose: true } });
    expect(out.isError).toBe(true);
    expect((out.content as Array<{ text: string }>)[0]!.text).toMatch(/verbose|Unrecognized key/);
    const typo = await client.callTool({ name: "config_get", arguments: { key: "daemon.port", sorce: true } });
    expect(typo.isError).toBe(true);
    await client.close();
  });

  it.each([
    ["sentinel_list", {}],
    ["list_sentinel_adapters", {}],
    ["sentinel_poll_now", {}],
    ["session_list", {}],
    ["model_roles", {}],
    ["config_get", { key: "daemon.port" }],
    ["config_get", { key: "daemon" }],
    ["config_set", { key: "models.review.small", value: "claude-haiku-4-5" }],
  ])("%s %j answers content its own outputSchema accepts", async (name, args) => {
    const client = await connect();
    const out = await client.callTool({ name, arguments: args });
    expect(out.isError, JSON.stringify(out.content)).toBeFalsy();
    expect(out.structuredContent).toBeTypeOf("object");
    await client.close();
  });
});
