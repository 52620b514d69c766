import { describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { useDaemonProcess } from "../../support/cli.js";

const STABLE = "mcp-process-stable-token-7d1e0c";

async function connect(base: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: "svc-test", version: "0.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", base), { requestInit: { headers } }));
  return client;
}

describe("/mcp on a real daemon process (daemon.authToken set)", () => {
  const fx = useDaemonProcess({ args: ["--auth-token", STABLE] });

  it("loopback callers are exempt and see the whole TOOLS table", async () => {
    const client = await connect(fx.daemon.baseUrl);
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["sentinel_watch", "sentinel_list", "list_sentinel_adapters"]),
    );
    expect(tools.find((t) => t.name === "sentinel_list")!.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === "sentinel_watch")!.annotations?.readOnlyHint).toBe(false);
    const out = await client.callTool({ name: "sentinel_list", arguments: {} });
    expect(out.structuredContent).toEqual({ sentinels: [] });
    await client.close();
  });

  it("a non-loopback caller needs a token: none and a wrong one are refused, the stable and per-boot ones accepted", async () => {
    const xff = { "x-forwarded-for": "192.0.2.10" };
    await expect(connect(fx.daemon.baseUrl, xff)).rejects.toThrow(/401|unauthorized/i);
    await expect(connect(fx.daemon.baseUrl, { ...xff, authorization: "Bearer not-the-token" })).rejects.toThrow(
      /401|unauthorized/i,
    );
    for (const token of [STABLE, fx.daemon.token]) {
      const client = await connect(fx.daemon.baseUrl, { ...xff, authorization: `Bearer ${token}` });
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      await client.close();
    }
  });

  it("a 2026-07-28 client (server/discover, per-request envelope) lists and calls the same tools; beyond loopback it needs the token", async () => {
    const xff = { "x-forwarded-for": "192.0.2.10" };
    const client = new ModernClient({ name: "svc-test", version: "0.0.0" }, { versionNegotiation: { mode: "auto" } });
    await client.connect(
      new ModernTransport(new URL("/mcp", fx.daemon.baseUrl), {
        requestInit: { headers: { ...xff, authorization: `Bearer ${STABLE}` } },
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const tools = (await client.listTools()).tools;
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(["sentinel_watch", "sentinel_list", "list_sentinel_adapters"]),
    );
    expect((await client.callTool({ name: "sentinel_list", arguments: {} })).structuredContent).toEqual({
      sentinels: [],
    });
    const bad = await client.callTool({ name: "sentinel_unwatch", arguments: { id: 42 } });
    expect(bad.isError).toBe(true);
    await client.close();
    const anonymous = new ModernClient(
      { name: "svc-test", version: "0.0.0" },
      { versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    await expect(
      anonymous.connect(new ModernTransport(new URL("/mcp", fx.daemon.baseUrl), { requestInit: { headers: xff } })),
    ).rejects.toThrow(/401|unauthorized/i);
  });

  it("an invalid tool input is rejected by the schema", async () => {
    const client = await connect(fx.daemon.baseUrl);
    const out = await client.callTool({ name: "sentinel_unwatch", arguments: { id: 42 } });
    expect(out.isError).toBe(true);
    expect((out.content as Array<{ text: string }>)[0]!.text).toMatch(/Input validation error.*id/s);
    await client.close();
  });
});
